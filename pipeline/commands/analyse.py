"""What a network thinks of positions: `python -m pipeline.analyse [CHECKPOINT | NAME | --champion] < positions`.

One position a line on standard input, written as the moves played from the start in the game's own
notation: for drop games (connect4, connect3x3) a string of 1-based columns as in the standard Connect-4
test sets (`4453`; anything after the first space is ignored, so `Test_L1_R1` lines work as they are),
for other games moves separated by spaces or commas, each read by the game's `parse_move`
(`1,5 9` in Tic-Tac-Mo); an empty line is the starting position. For each line prints the move chosen,
the policy over the legal moves and the value vector in absolute seats: the raw network's with
`--sims 0`, search's with `--sims N` (visit shares, mean backed-up value at the root; default search
settings, no root noise). `--json` prints one JSON object a line instead: `line` (its number), `moves`,
`to_play` (seat), `move`, `policy` ({move: probability}), `value` (one entry per seat), `sims`. Lines
are searched `--batch` at a time (default 64; 1 when standard input is a terminal, so each line is
answered as soon as it is typed), one network call for all of them per simulation. Ctrl-C stops with
status 130.

A bad line (unknown or illegal move, a finished game, a move decided by dice: positions of games with
chance cannot be written as move lists) gets one error line on standard error naming its number, and
the next line goes on; the exit status is 1 if any line was bad, so scripts notice.

The network is a checkpoint file, the NAME of a champion shipped with the package (`tictacmo`,
`connect4`, ...: `python -m pipeline.champions` lists them; a file of that name wins) or, with
`--champion`, the version of the MLflow registered model that holds the `champion` alias (as the
pipeline's gate moves it); the game is the checkpoint's own unless `--game` names it (and then must
match).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from itertools import islice
from pathlib import Path

import numpy as np

from pipeline import champions
from pipeline.clip import clip
from pipeline.commands.cli import entry_point
from pipeline.config import TrackingParams
from pipeline.games import Game, IllegalMove, make_game
from pipeline.games.connect import ConnectGame
from pipeline.jobs.tracking import default_tracking_uri, download_champion
from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint
from pipeline.nets.evaluator import NetworkEvaluator
from pipeline.nets.senet import SENet
from pipeline.search import BatchedSearch, Forest, SearchConfig
from pipeline.search.gumbel import GumbelSearch
from pipeline.search.mcts import masked_softmax, to_absolute


# --- the network: a file or the MLflow champion (shared with pipeline.commands.play) ----------------------
def add_network_arguments(parser: argparse.ArgumentParser) -> None:
    shipped = ", ".join(champions.names()) or "none yet"
    parser.add_argument(
        "checkpoint",
        nargs="?",
        help=f"a checkpoint file, such as models/best/gen_5.ckpt, or a shipped champion's name ({shipped})",
    )
    parser.add_argument("--champion", action="store_true", help="the MLflow registry's champion instead of a file")
    parser.add_argument("--game", help="game spec (default: the game the checkpoint was trained for)")
    parser.add_argument("--tracking-uri", help="MLflow store of --champion (default: sqlite:///./mlflow.db)")
    parser.add_argument("--model-name", default=TrackingParams().model_name, help="registered model of --champion")


def load_network(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Game, SENet | None]:
    """The game and the network the arguments name; no network when neither a file nor --champion is given."""
    if args.checkpoint and args.champion:
        parser.error("give a CHECKPOINT or --champion, not both")
    if args.champion:
        uri = args.tracking_uri or default_tracking_uri()
        with tempfile.TemporaryDirectory() as directory:
            return _load(parser, download_champion(uri, args.model_name, Path(directory)), args.game)
    if args.checkpoint:
        return _load(parser, champions.resolve(args.checkpoint), args.game)
    if not args.game:
        parser.error("give a CHECKPOINT, --champion or --game")
    return _game(parser, args.game), None


def _load(parser: argparse.ArgumentParser, path: Path, spec: str | None) -> tuple[Game, SENet]:
    if spec:
        game = _game(parser, spec)
        return game, load_checkpoint(path, game.name)
    model = load_checkpoint(path)  # one clear line for a missing or foreign file
    return _game(parser, checkpoint_game(path)), model


def _game(parser: argparse.ArgumentParser, spec: str) -> Game:
    try:
        return make_game(spec)
    except ValueError as err:
        parser.error(str(err))


# --- positions ---------------------------------------------------------------------------------
def move_texts(game: Game, line: str) -> list[str]:
    """A line's moves: one character a column for drop games (the test sets' notation), else words."""
    if isinstance(game, ConnectGame) and game.gravity:
        words = line.split()
        return list(words[0]) if words else []
    return [word for word in re.split(r"[\s,]+", line.strip()) if word]


def read_position(game: Game, line: str):
    """The moves (as the game writes them) and the position they reach; IllegalMove if there is none."""
    state, moves = game.initial_state(), []
    for text in move_texts(game, line):
        if game.is_terminal(state):
            raise IllegalMove(f"the game is over after {len(moves)} moves, before {text!r}")
        action = game.parse_move(state, text)
        state, chance = game.step(state, action, np.random.default_rng(0))
        if chance is not None:
            raise IllegalMove(f"move {text!r} is decided by chance: {game.name} positions cannot be written as moves")
        moves.append(game.format_move(action))
    if game.is_terminal(state):
        raise IllegalMove("the game is over: nothing to analyse")
    return moves, state


def analyse(game: Game, evaluator, states: list, sims: int, config: SearchConfig | None = None):
    """Policies over all actions and value vectors in absolute seats, one row per state, in one batch
    (search with `config`, default settings if None).

    Every tree draws dice inside search from its own generator with one fixed seed, so a line's answer
    does not depend on the lines searched beside it."""
    _, policies, values = search_positions(game, evaluator, states, sims, config)
    return policies, values


def search_positions(game: Game, evaluator, states: list, sims: int, config: SearchConfig | None = None):
    """`analyse` with the move each row's chooser plays: the most probable legal move of the raw
    policy (`sims` 0), the most visited one (PUCT), or sequential halving's choice (`root: gumbel`,
    no noise; its policy is the improved policy, whose argmax may differ)."""
    if sims == 0:
        logits, values = evaluator.evaluate(states)
        legal = np.stack([game.legal_mask(s) for s in states])
        movers = np.array([game.to_play(s) for s in states])
        policies = masked_softmax(np.asarray(logits, dtype=np.float32), legal)
        return _argmax_legal(game, states, policies), policies, to_absolute(np.asarray(values), movers)
    config = config or SearchConfig()
    # a simulation adds at most two nodes (a chance node and its outcome)
    forest = Forest(game, 2 * sims + 16, len(states), config.end_value(game), config.max_chance_children)
    slots = [forest.new_tree(s, np.random.default_rng(0)) for s in states]
    search = BatchedSearch(game, evaluator, config)
    if config.root == "gumbel":
        choices = GumbelSearch(search).run(forest, slots, [sims] * len(slots), [False] * len(slots))
        moves, policies = [c.action for c in choices], np.stack([c.policy for c in choices])
    else:
        search.run(forest, slots, sims)
        visits = np.stack([forest.root_visits(slot) for slot in slots]).astype(np.float64)
        policies = visits / visits.sum(axis=1, keepdims=True)
        moves = _argmax_legal(game, states, policies)
    return moves, policies, np.stack([forest.root_value(slot) for slot in slots])


def _argmax_legal(game: Game, states: list, policies: np.ndarray) -> list[int]:
    return [max(game.legal_actions(state), key=lambda a: policy[a]) for state, policy in zip(states, policies)]


def summary(game: Game, number: int, moves: list[str], state, policy: np.ndarray, value: np.ndarray, sims: int):
    legal = game.legal_actions(state)
    best = game.format_move(max(legal, key=lambda a: policy[a]))
    return {
        "line": number,
        "moves": moves,
        "to_play": game.to_play(state),
        "move": best,
        "policy": {game.format_move(a): round(float(policy[a]), 6) for a in legal},
        "value": [round(float(v), 6) for v in value],
        "sims": sims,
    }


def as_text(game: Game, result: dict) -> str:
    joiner = "" if isinstance(game, ConnectGame) and game.gravity else ","
    position = joiner.join(result["moves"]) or "(start)"
    value = " ".join(f"{v:+.3f}" for v in result["value"])
    policy = " ".join(f"{m}:{p:.3f}" for m, p in result["policy"].items())
    return f"{position}  seat {result['to_play']} to move  move {result['move']}  value {value}  policy {policy}"


@entry_point
def main(argv):
    parser = argparse.ArgumentParser(prog="python -m pipeline.analyse", description=__doc__.splitlines()[0])
    add_network_arguments(parser)
    parser.add_argument("--sims", type=int, default=0, help="search simulations per position; 0 = the raw network")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--batch", type=int, help="lines searched together (default 64, 1 at a terminal)")
    args = parser.parse_args(argv)
    if args.sims < 0 or (args.batch is not None and args.batch < 1):
        parser.error("--sims must be at least 0 and --batch at least 1")
    game, model = load_network(parser, args)
    if model is None:
        parser.error("give the network to analyse with: a CHECKPOINT or --champion")
    batch = args.batch or (1 if sys.stdin.isatty() else 64)  # a person typing waits for no batch to fill
    failed = answer_lines(game, NetworkEvaluator(game, model), batch, args.sims, args.json)
    if failed:
        sys.exit(1)


def answer_lines(game: Game, evaluator, batch: int, sims: int, as_json: bool) -> bool:
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
        policies, values = analyse(game, evaluator, [state for _, _, state in positions], sims)
        for (number, moves, state), policy, value in zip(positions, policies, values):
            result = summary(game, number, moves, state, policy, value, sims)
            print(json.dumps(result) if as_json else as_text(game, result), flush=True)
    return failed


if __name__ == "__main__":
    main()
