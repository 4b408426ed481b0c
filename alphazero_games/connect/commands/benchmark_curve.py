"""Connect-4 mistakes of every generation of a run, against the compute spent: each generation's best
network on Pons' test positions, beside the self-play simulations and the wall hours spent to reach it.

The command of `pipeline/evaluation/strength_curve.py`: each network is scored once, so a curve drawn again
costs nothing.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from alphazero_games.connect.experiments.benchmark import curve_section, run_benchmark
from alphazero_games.connect.experiments.pons import positions_dir, resolve_files
from alphazero_games.connect.params import BenchmarkParams
from pipeline.agents.recipes import search_config
from pipeline.commands.cli import add_simulations
from pipeline.config import load_params
from pipeline.evaluation.lineage import run_compute
from pipeline.evaluation.strength_curve import curve
from pipeline.games import make_game
from pipeline.harness.entry import UsageError, entry_point
from pipeline.nets.checkpoint import load_checkpoint

log = logging.getLogger(__name__)


@entry_point
def main(argv):
    parser = argparse.ArgumentParser(
        prog="python -m pipeline benchmark_curve",
        description="Connect-4 mistakes of every generation of a run folder, against the compute spent.",
    )
    parser.add_argument(
        "run", type=Path, help="the folder a Connect-4 `dvc repro` ran in (params.yaml, models/, metrics/)"
    )
    add_simulations(parser, "--sims", nargs="+", default=[0, 600], help="0 = the raw policy")
    parser.add_argument("--positions", type=int, default=200, help="first N positions of each set")
    parser.add_argument("--data-dir", help="folder of test sets (default: the sets shipped in the package)")
    parser.add_argument("--plot", type=Path, help="also draw the curve into this PNG")
    parser.add_argument("--root", choices=["puct", "gumbel"], help="root search to score with (default: the run's)")
    parser.add_argument("--json", action="store_true", help="one JSON row per generation, set and chooser")
    args = parser.parse_args(argv)
    params_file = args.run / "params.yaml"
    params = load_params(params_file)
    if params.game != "connect4":  # Pons' positions are Connect-4 moves: another game's board cannot read them
        raise UsageError(f"{params_file}: game {params.game!r}; benchmark_curve scores Connect-4 runs only")
    game = make_game(params.game)
    compute = run_compute(args.run)
    networks = [load_checkpoint(args.run / "models" / "best" / f"gen_{g}.ckpt", game) for g in range(len(compute))]
    files = resolve_files(args.data_dir, [])
    if not files:
        parser.error(f"no test files found in {positions_dir(args.data_dir)}")
    settings = BenchmarkParams(simulations=args.simulations, positions_per_set=args.positions, every_generation=True)
    cache = args.run / "data" / "matches" / "benchmark"
    config = search_config(params)
    config = config.model_copy(update={"root": args.root}) if args.root else config  # compare networks, not searches
    scores = run_benchmark(game, networks, files, settings, config, cache, sys.stderr.isatty())["benchmark_generations"]
    rows = curve(scores, compute)
    for row in rows:
        print(json.dumps(row) if args.json else f"gen {row['generation']:3d} {row['simulations'] / 1e6:8.2f}M sims "
              f"{row['hours']:6.2f} h  {row['set']:12s} {row['chooser']:12s} {row['percent']:6.2f}%")  # fmt: skip
    if args.plot:
        curve_section(rows).plots[0].figure.savefig(args.plot, dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main()
