"""Head-to-head: `python -m pipeline match A.ckpt B` where B is a checkpoint or a baseline; A may be a
baseline too, with `--game` (`match mce:200 greedy --game "kingdomino(players=4)" --first-alone`).

A and B may name shipped champions (`tictacmo`: `python -m pipeline champions` lists them; a file of
that name wins), or `best`: the network the run in this folder ended with (`models/best/gen_N.ckpt`, N
the `champion_gen` of metrics/summary.json), which must play params.yaml's game. The game is A's, the
one its checkpoint was trained for; the search settings come from `--params`, else, where A is a shipped
champion, from the params that trained it and its card's `play.search`, else from `params.yaml` where it
plays that game, else from the schema's defaults: the command works outside a checkout.

Networks play AlphaZero search with the search params of `params.yaml`, over every seating where both
sit at the table; `--second-params FILE` gives B, a network, the search settings of another file (a
setting tuned by `sweep --play` against the one the network was trained with: Chen et al.'s yardstick);
prints A's pairwise score against B (ties half) with a 95% confidence interval, in a line a person
reads, or with `--json` as one JSON object (scores to 4 decimals) for scripts.
`--first-alone` seats A once and B in every other seat, over every seat order (Petosa & Balch's setting:
one AlphaZero against two UCT players in Tic-Tac-Mo), and also counts A's wins (first place alone),
ties (first place shared) and losses, and `ahead_of_half`: the games where A's own score is above zero,
which with more than two seats and pairwise scores (Kingdomino) is finishing ahead of more than half
the table, not winning (a first place is a quarter of the games at parity for four players, that count
half).
`--move-time S` has the networks search S seconds a move instead of a budget (at most `--simulations`,
default 1000, and what the tree has room for); baselines move by time where their name
says so (`uct:0.5s`, `mce:0.5s`). A match with a timed player plays one game at a time in each worker,
so a move's time is its own, and its games are not reproducible move for move.
Two networks play with root noise and `gate.temperature_moves` sampled opening moves (as in gating),
else they would replay one game; against a baseline A plays its most visited move, as in evaluation
(`pipeline/agents/recipes.py`). Baselines (`pipeline/agents/names.py`): `uct:N`, `random`, and
where the game allows `alphabeta:D` and `solver` (Connect-4), `optimal` and `hold:N` (two-player Pig).
"""

from __future__ import annotations

import json

import numpy as np

from pipeline.agents.names import (
    BASELINES,
    NETWORK,
    PlayerName,
    baseline_spec,
    expected,
    parse_player,
    refuse_not_brought,
)
from pipeline.commands.cli import add_simulations, command_parser, refuse_outside
from pipeline.commands.networks import (
    RUN_BEST,
    add_params_argument,
    checkpoint_named,
    file_game,
    local_game,
    network_params,
    trusted_game,
)
from pipeline.config import (
    MAX_GAMES,
    MAX_MOVE_SECONDS,
    MAX_SEED,
    MAX_SIMULATIONS,
    TIMED_SIMULATIONS,
    Params,
    load_params,
)
from pipeline.games import Game, make_game
from pipeline.harness.entry import UsageError, entry_point
from pipeline.matches.arena import mixed_seatings, score_interval, seat_permutations
from pipeline.nets.header import check_header

MAX_MATCH_GAMES = 1_000_000  # games in one match: each keeps its record until the match ends


@entry_point
def main(argv):
    parser = command_parser("match", __doc__)
    parser.add_argument(
        "first",
        metavar="A",
        help=f"the player scored: a checkpoint file, a shipped champion's name, {RUN_BEST} or a baseline",
    )
    parser.add_argument(
        "--game", help="the game (default: the one A's checkpoint was trained for; needed when A is a baseline)"
    )
    parser.add_argument(
        "second", metavar="B", help=f"its opponent, of the baselines the game allows: {expected((*BASELINES, NETWORK))}"
    )
    parser.add_argument("--games-per-seating", type=int, default=20, help="games in each seating (default 20)")
    add_simulations(
        parser, "--rollouts", default=None, help="the networks' search budget (default: search.simulations)"
    )
    parser.add_argument("--move-time", type=float, metavar="S", help="networks search S seconds a move")
    add_params_argument(parser)
    parser.add_argument(
        "--second-params",
        metavar="FILE",
        help="params file of B's search settings, where B is a network (default: A's, as --params says)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the match's games (default 0)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the line a person reads")
    parser.add_argument(
        "--first-alone", action="store_true", help="A in one seat, B in all others (Petosa & Balch's test)"
    )
    args = parser.parse_args(argv)
    refuse_outside(1, MAX_GAMES, {"--games-per-seating": args.games_per_seating})
    refuse_outside(1, MAX_SIMULATIONS, {"--simulations": args.simulations})
    refuse_outside(0, MAX_SEED, {"--seed": args.seed})
    if args.move_time is not None and not 0 < args.move_time <= MAX_MOVE_SECONDS:  # nan fails both
        raise UsageError(
            f"--move-time: expected seconds above 0, at most {MAX_MOVE_SECONDS:,.0f}, got {args.move_time}"
        )
    first_player, second = baseline_or_network(args.first), player_named(args.second)
    if args.second_params and second.kind != NETWORK:
        raise UsageError(f"--second-params: B ({args.second}) is a baseline; the option sets a network's search")
    if first_player.kind != NETWORK and not args.game:
        raise UsageError(f"{args.first}: A is a baseline; give the game to play with --game")
    play(args, first_player, second)


def play(args, first_player: PlayerName, second: PlayerName) -> None:
    """The match that the checked arguments name. Torch, the networks and the workers are imported here,
    after every argument's one-line error (a network name that is none, a game that cannot be): their
    import takes seconds on a loaded machine."""
    players = (("first", first_player), ("second", second))
    files = {name: checkpoint_named(player.text, args.game) for name, player in players if player.kind == NETWORK}
    spec = args.game
    if "first" in files:  # the game A's file names, read without torch (None: the load below says why)
        first, given = files["first"]
        spec = file_game(first, given)
    game = game_named(spec) if spec else None
    for player in (first_player, second) if game is not None else ():
        try:  # a kind the game does not bring: one line before torch
            refuse_not_brought(player, game)
        except ValueError as err:
            raise UsageError(str(err)) from None
    for path, _ in files.values():  # a missing, damaged or misfit file: one line before torch
        check_header(path, game)
    if game is not None:  # a params file of another game or too many games: one line before torch
        searches, table = match_plan(args, first_player, spec, game)
    from pipeline.agents.recipes import champion_player, head_to_head_player
    from pipeline.matches.workers import Workers, play_match
    from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint

    if "first" in files:
        load_checkpoint(first)  # a missing or damaged file is one line before its game is asked
        spec = spec or trusted_game(checkpoint_game(first), local_game(), first)
    if game is None:
        game = game_named(spec)
        searches, table = match_plan(args, first_player, spec, game)
    params = searches["first"]
    seconds = args.move_time or 0.0
    simulations = args.simulations or (TIMED_SIMULATIONS if seconds else params.search.simulations)
    against_network = second.kind == NETWORK and first_player.kind == NETWORK
    specs = []
    for name, player in players:
        if player.kind == NETWORK:
            model = load_checkpoint(files[name][0], game)
            recipe = head_to_head_player if against_network else champion_player
            specs.append(recipe(name, model, searches[name], simulations, seconds))
        else:
            baseline = baseline_spec(player, name, params.evaluate.c_uct, args.seed + len(specs))
            try:
                baseline.build(game)  # a baseline that cannot play this game says so before the match
            except ValueError as err:
                raise UsageError(f"{player.text}: {err}") from None
            specs.append(baseline)
    timed = any(spec.play.seconds > 0 for spec in specs)
    result = play_match(
        game.name,
        specs,
        table * args.games_per_seating,
        [args.seed, 4],
        1 if timed else params.selfplay.parallel_games,
        Workers.from_params(params),
        progress=f"match on {game.name}",  # a bar on stderr, as the stages show theirs; stdout keeps one line
    )
    summary = {"game": game.name, "first": args.first, "second": args.second}
    summary |= score_interval(result.records, "first", "second")
    if args.first_alone:
        summary.update(first_place_counts(result.records, "first"))
    print(json.dumps(rounded(summary)) if args.json else score_line(summary))


def rounded(summary: dict) -> dict:
    """Scores to 4 decimals (the interval of 10^6 games is wider), and no interval (one game) as null:
    JSON has no NaN."""
    return {k: None if v != v else round(v, 4) if isinstance(v, float) else v for k, v in summary.items()}


def score_line(summary: dict) -> str:
    """The match in one line a person reads: A's pairwise score, its interval, and A's places alone."""
    low, high = summary["ci95_low"], summary["ci95_high"]
    interval = "one game: no interval" if low != low else f"95% interval {low:.3f}-{high:.3f}"
    line = (f"{summary['first']} against {summary['second']} on {summary['game']}: pairwise score "
            f"{summary['score']:.3f} ({interval}) over {summary['games']:,} games")  # fmt: skip
    if "wins" in summary:
        line += f"; alone at the table: wins {summary['wins']}, ties {summary['ties']}, losses {summary['losses']}"
    return line


def match_plan(args, first_player, spec: str, game: Game) -> tuple[dict[str, Params], list]:
    """Each side's params (A's from `--params` or its network's own, B's from `--second-params` or A's)
    and the seatings, each played `--games-per-seating` times."""
    params = network_params(args.params, args.first if first_player.kind == NETWORK else None, spec)
    searches = {"first": params, "second": second_search(args.second_params, game) if args.second_params else params}
    table = (
        seat_permutations([0] + [1] * (game.num_players - 1)) if args.first_alone else mixed_seatings(game.num_players)
    )
    if len(table) * args.games_per_seating > MAX_MATCH_GAMES:  # a record a game is kept: gigabytes past it
        raise UsageError(
            f"--games-per-seating: {args.games_per_seating:,} x {len(table)} seatings of {game.name} is over "
            f"{MAX_MATCH_GAMES:,} games; expected at most {MAX_MATCH_GAMES // len(table):,} a seating"
        )
    return searches, table


def second_search(path: str, game: Game) -> Params:
    """B's params from `--second-params`: they must be of the match's game (a value scheme or a chance
    setting of another game's would not fit B's network)."""
    params = load_params(path)
    if make_game(params.game).name != game.name:
        raise UsageError(f"--second-params: {path} plays {params.game}, the match {game.name}")
    return params


def game_named(spec: str) -> Game:
    """The game of `spec`; an unknown one, or one that breaks the contract, is its own line."""
    try:
        return make_game(spec)
    except ValueError as err:
        raise UsageError(str(err)) from None


def first_place_counts(records, name: str) -> dict[str, int]:
    """Games `name` won (its score above every other seat's), tied for first and lost, and those where its
    own score was above zero (`ahead_of_half`, the count that `wins` was up to issue 51)."""
    counts = {"wins": 0, "ties": 0, "losses": 0, "ahead_of_half": 0}
    for record in records:
        seat = record.seating.index(name)
        own, others = record.scores[seat], np.delete(record.scores, seat)
        counts["wins" if own > others.max() else "ties" if own == others.max() else "losses"] += 1
        counts["ahead_of_half"] += bool(own > 0)
    return counts


def baseline_or_network(text: str) -> PlayerName:
    if text == RUN_BEST:  # a network, not a kind of the game's own
        return PlayerName(NETWORK, text=text)
    try:
        return parse_player(text, BASELINES)
    except ValueError:
        return PlayerName(NETWORK, text=text)


def player_named(text: str) -> PlayerName:
    if text == RUN_BEST:
        return PlayerName(NETWORK, text=text)
    try:
        return parse_player(text, (*BASELINES, NETWORK))
    except ValueError:
        kinds = expected((*BASELINES, NETWORK))
        raise UsageError(f"{text or repr(text)}: neither a checkpoint file nor a baseline; expected {kinds}") from None
