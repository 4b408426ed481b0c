"""What a network thinks of positions: `python -m pipeline analyse [CHECKPOINT | NAME | --champion] < positions`.

One position a line on standard input, written as the moves played from the start in the game's own
notation: for drop games (connect4, connect3x3) a string of 1-based columns as in the standard Connect-4
test sets (`4453`; anything after the first space is ignored, so `Test_L1_R1` lines work as they are),
for other games moves separated by spaces or commas, each read by the game's `parse_move`
(`1,5 9` in Tic-Tac-Mo); an empty line is the starting position. Kingdomino's draws may be written
as the row's domino numbers, at the start and after the pick that ends a round (`1-2-3-4 p1 p2 p3 p4
9-10-11-12 e4r p1`); a draw not written follows the game's fixed order. For each line prints the move chosen,
the policy over the legal moves and the value vector in absolute seats: the raw network's with
`--simulations 0`, search's with `--simulations N` (visit shares, mean backed-up value at the root; the
network's own search settings, as `--params` says, no root noise). `--json` prints one JSON object a line
instead: `line` (its number), `moves`, `to_play` (seat), `move`, `policy` ({move: probability}), `value`
(one entry per seat), `simulations`. Lines
are searched `--batch` at a time (default 64; 1 when standard input is a terminal, so each line is
answered as soon as it is typed), one network call for all of them per simulation. Ctrl-C stops with
status 130.

A bad line (unknown or illegal move, a finished game, a draw that cannot be, a move decided by dice:
positions of other games with chance cannot be written as move lists) gets one error line on standard
error naming its number, and the next line goes on; the exit status is 1 if any line was bad, so
scripts notice.

The network is a checkpoint file, the NAME of a champion shipped with the package (`tictacmo`,
`connect4`, ...: `python -m pipeline champions` lists them; a file of that name wins), `best` (the
network the run in this folder ended with, as in `match`) or, with `--champion`, the version of the
MLflow registered model that holds the `champion` alias (as the pipeline's gate moves it); the game is
the checkpoint's own unless `--game` names it (and then must match).
"""

from __future__ import annotations

import json
import sys
from itertools import islice

import numpy as np

from pipeline.commands.cli import add_simulations, command_parser, out_of_range
from pipeline.commands.networks import add_network_arguments, load_network, network_params
from pipeline.config import MAX_SIDE_BY_SIDE, MAX_SIMULATIONS
from pipeline.games import Game, IllegalMove
from pipeline.games.base import joins_moves
from pipeline.games.moves import example_line, read_position
from pipeline.harness.entry import entry_point
from pipeline.plumbing.clip import clip
from pipeline.search.analysis import analyse


def summary(game: Game, number: int, moves: list[str], state, policy: np.ndarray, value: np.ndarray, simulations: int):
    legal = game.legal_actions(state)
    best = game.format_move(max(legal, key=lambda a: policy[a]))
    return {
        "line": number,
        "moves": moves,
        "to_play": game.to_play(state),
        "move": best,
        "policy": {game.format_move(a): round(float(policy[a]), 6) for a in legal},
        "value": [round(float(v), 6) for v in value],
        "simulations": simulations,
    }


def as_text(game: Game, result: dict) -> str:
    joiner = "" if joins_moves(game) else ","
    position = joiner.join(result["moves"]) or "(start)"
    value = " ".join(f"{v:+.3f}" for v in result["value"])
    policy = " ".join(f"{m}:{p:.3f}" for m, p in result["policy"].items())
    return f"{position}  seat {result['to_play']} to move  move {result['move']}  value {value}  policy {policy}"


@entry_point
def main(argv):
    parser = command_parser("analyse", __doc__)
    add_network_arguments(parser)
    add_simulations(parser, "--sims", default=0, help="search simulations per position; 0 = the raw network")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--batch", type=int, help="lines searched together (default 64, 1 at a terminal)")
    args = parser.parse_args(argv)
    if problem := out_of_range(0, MAX_SIMULATIONS, {"--simulations": args.simulations}) or out_of_range(
        1, MAX_SIDE_BY_SIDE, {"--batch": args.batch}
    ):
        parser.error(problem)
    if not (args.checkpoint or args.champion):  # --game alone is enough to play, never to analyse
        parser.error("give the network to analyse with: a CHECKPOINT or --champion")
    game, model = load_network(parser, args)
    batch = args.batch or (1 if sys.stdin.isatty() else 64)  # a person typing waits for no batch to fill
    from pipeline.agents.recipes import search_config  # torch: after the arguments' checks
    from pipeline.nets.network_evaluator import NetworkEvaluator

    config = search_config(network_params(args.params, args.checkpoint, game.name))
    evaluator = NetworkEvaluator(game, model, runtime=config.runtime, device=config.device)
    if sys.stdin.isatty():  # a person who typed the command alone: what to type, and how to end
        example = example_line(game)
        shown = f" (`{example}`)" if example else ""
        print(f"one position a line: its moves from the start{shown}, an empty line the start; Ctrl-D ends",
              file=sys.stderr, flush=True)  # fmt: skip
    failed = answer_lines(game, evaluator, batch, args.simulations, args.json, config)
    if failed:
        sys.exit(1)


def answer_lines(game: Game, evaluator, batch: int, simulations: int, as_json: bool, config=None) -> bool:
    """Answer standard input's lines `batch` at a time; True if any line was bad."""
    numbered, failed = enumerate(sys.stdin, start=1), False
    while chunk := list(islice(numbered, batch)):
        positions = []
        for number, line in chunk:
            try:
                positions.append((number, *read_position(game, line)))
            except IllegalMove as err:
                print(f"error: line {number} ({clip(line.strip(), 60)}): {clip(str(err))}", file=sys.stderr, flush=True)
                failed = True
        if not positions:
            continue
        policies, values = analyse(game, evaluator, [state for _, _, state in positions], simulations, config)
        for (number, moves, state), policy, value in zip(positions, policies, values):
            result = summary(game, number, moves, state, policy, value, simulations)
            print(json.dumps(result) if as_json else as_text(game, result), flush=True)
    return failed


if __name__ == "__main__":
    main()
