"""Connect-4 mistakes of one network on Pons' test positions: how often its move is worse (win / draw /
loss) than the best one.

`python -m pipeline connect4_benchmark CHECKPOINT [--simulations 0 100] [--root puct|gumbel] [--files F ...]
[--positions N] [--c-puct C] [--fpu-reduction R] [--precision float32|bfloat16|int8]
[--runtime auto|torch|onnxruntime] [--json]`

A file is either a test set (`MOVES SCORE` a line, as `Test_L2_R1`) or a labelled set (`MOVES s1 ... s7`,
the exact score of every column, −1000 for a full one, as `cols_L2_R1.txt`). Outcomes of the columns
come from the labels when the file has them, else from the perfect solver (win/draw/loss only). The
raw policy (`--simulations 0`) picks the most probable legal move, PUCT search the most visited one, Gumbel
search (`--root gumbel`, no noise) sequential halving's choice.
"""

from __future__ import annotations

import json
import math

from alphazero_games.connect.experiments.pons import DEFAULT_FILES, mistake_rates, positions_dir, resolve_files
from pipeline import champions
from pipeline.commands.cli import add_simulations, command_parser, out_of_range
from pipeline.config import MAX_GAMES, MAX_SIMULATIONS, ConfigError
from pipeline.games import make_game
from pipeline.harness.entry import entry_point
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.nets.network_evaluator import PRECISIONS, RUNTIMES, NetworkEvaluator
from pipeline.search import CachingEvaluator, SearchConfig


@entry_point
def main(argv):
    parser = command_parser("connect4_benchmark", __doc__)
    parser.add_argument("checkpoint", help="a checkpoint file or a shipped champion's name")
    add_simulations(parser, "--sims", nargs="+", default=[0, 100], help="0 = the raw policy")
    parser.add_argument("--files", nargs="+", default=[], help=f"default: {' '.join(DEFAULT_FILES)}")
    parser.add_argument("--data-dir", help="folder of test sets (default: the sets shipped in the package)")
    parser.add_argument("--positions", type=int, default=100, help="first N positions of each file")
    parser.add_argument("--root", choices=["puct", "gumbel"], default="puct", help="root search (default puct)")
    parser.add_argument(
        "--c-puct",
        type=float,
        default=SearchConfig().c_puct,
        help=f"PUCT's exploration constant (default {SearchConfig().c_puct}; a run's curve uses the run's own)",
    )
    parser.add_argument(
        "--fpu-reduction",
        type=float,
        default=SearchConfig().fpu_reduction,
        help="first-play urgency: an unvisited move's value is its parent's less this (default 0, off)",
    )
    parser.add_argument("--precision", choices=list(PRECISIONS), default="float32", help="the network's arithmetic")
    parser.add_argument("--runtime", choices=list(RUNTIMES), default="auto", help="what runs the network")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not (math.isfinite(args.c_puct) and args.c_puct > 0):
        parser.error(f"--c-puct: expected a positive number, got {args.c_puct}")
    if not (math.isfinite(args.fpu_reduction) and args.fpu_reduction >= 0):
        parser.error(f"--fpu-reduction: expected a number of at least 0, got {args.fpu_reduction}")
    problems = [out_of_range(0, MAX_SIMULATIONS, {"--simulations": n}) for n in args.simulations]
    problems.append(out_of_range(1, MAX_GAMES, {"--positions": args.positions}))
    if problem := next(filter(None, problems), None):
        parser.error(problem)
    game = make_game("connect4")
    files = resolve_files(args.data_dir, args.files)
    if not files:
        parser.error(f"no test files found in {positions_dir(args.data_dir)}; give --files or --data-dir")
    network = load_checkpoint(champions.resolve(args.checkpoint), game)
    try:
        evaluator = CachingEvaluator(NetworkEvaluator(game, network, args.precision, args.runtime))
    except ConfigError as err:
        parser.error(str(err).replace("search.runtime", "--runtime"))
    config = SearchConfig(
        c_puct=args.c_puct,
        fpu_reduction=args.fpu_reduction,
        root=args.root,
        precision=args.precision,
        runtime=args.runtime,
    )
    try:
        rows = mistake_rates(game, evaluator, files, args.positions, args.simulations, config)
    except ValueError as err:
        parser.exit(1, f"error: {err}\n")
    for row in rows:
        print(json.dumps(row) if args.json else f"{row['set']:12s} {row['chooser']:12s} {row['percent']:6.2f}% "
              f"mistakes ({row['mistakes']}/{row['positions']})")  # fmt: skip


if __name__ == "__main__":
    main()
