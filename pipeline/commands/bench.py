"""Throughput: the network alone, search with the network, self-play, and training.

The network and self-play are measured in the runtime `search.runtime: auto` picks (ONNX Runtime on
the CPU) and again in torch's (`torch_*`), the network at `--batch` and at 1 (`*_batch1`, as a timed
move calls it), with its FLOPs a position, the GFLOP/s it reaches and one core's float32 peak measured
in the same run (`core_peak_gflop_per_s`: a large matrix product on one thread); `timed_move_sims` are
the simulations a 0.25 s move searches.

`python -m pipeline bench` prints a table; `--json` prints one JSON object; `--quick` keeps the run
to a few minutes (Kingdomino's 96-ply games take most of it). Games with a greedy player (Kingdomino)
are measured again searching with greedy playouts at the leaves, with their playouts a second. One
process's search is measured again with a network that answers for free (`*_ceiling_*`): what no
accelerator or inference server can take a core's search past.
`--backend ray` plays the self-play figures on a local Ray; `--load` measures everything again beside
one busy process (the `*_under_load` figures); `--device cuda` (or auto on a machine with a GPU) puts
the network and training there, with `--batch` games searched side by side per process. Threads
follow the free cores (pipeline/plumbing/threads.py) unless `--threads` fixes them.
"""

from __future__ import annotations

import json
import re
from typing import get_args

from pipeline.commands.cli import command_parser, out_of_range
from pipeline.config import MAX_SIDE_BY_SIDE, MAX_WORKERS, Device, SearchSettings

PRECISIONS = get_args(SearchSettings.model_fields["precision"].annotation)  # the schema's, without torch


def _table(figures: dict) -> str:
    rows = [("figure", "value")]
    for key, value in figures.items():
        if isinstance(value, dict):
            rows += [(f"{key}.{k}", f"{v:,.2f}") for k, v in value.items()]
        elif isinstance(value, float):
            rows.append((key, f"{value:,.3f}"))
        else:
            rows.append((key, str(value)))
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{width}}  {b:>14}" for a, b in rows)


def _phase_tables(games, batch: int, networks: str) -> str:
    """A markdown table per game: each phase's share of a simulation's time, one process (`phases.py`)."""
    from pipeline.jobs.phases import PHASES, phase_seconds
    from pipeline.jobs.throughput import bench_network

    lines = []
    for name in games:
        seconds = phase_seconds(name, bench_network(name, networks)[1], batch)
        lines += [f"{name}: {seconds['total']:.2f} s, {batch} games at once", "", "| phase | share |", "| --- | --- |"]
        lines += [f"| {phase} | {seconds[phase] / seconds['total']:.1%} |" for phase in PHASES] + [""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = command_parser("bench", __doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--quick", action="store_true", help="small budgets: 3-4 minutes on 2 cores (docs/results/speed-bench.md)"
    )
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: follow the free cores)")
    parser.add_argument("--backend", choices=["pool", "ray"], default="pool", help="where self-play runs")
    parser.add_argument("--precision", choices=list(PRECISIONS), default="float32", help="the network's arithmetic")
    parser.add_argument("--device", choices=get_args(Device), default="auto", help="where networks infer and train")
    parser.add_argument(
        "--inference-server", choices=["auto", "on", "off"], default="auto", help="as backend.inference_server"
    )
    parser.add_argument("--batch", type=int, default=64, help="positions a network call: games side by side")
    parser.add_argument(
        "--networks",
        choices=["random", "champions"],
        default="random",
        help="random weights of GAMES' sizes (the params' default network for other games), or the shipped "
        "champion of each game that has one",
    )
    parser.add_argument(
        "--games",
        default=None,
        help="comma-separated game specs, any game (a plugin's `module:Class` too); default: the games that size"
        " their bench (games/base.py's SizesItsBench)",
    )
    parser.add_argument("--load", action="store_true", help="also measure beside one busy process (*_under_load)")
    parser.add_argument(
        "--phases", action="store_true", help="where one process's self-play time goes, phase by phase, per game"
    )
    args = parser.parse_args(argv)
    if problem := (
        out_of_range(1, MAX_SIDE_BY_SIDE, {"--batch": args.batch})
        or out_of_range(0, MAX_WORKERS, {"--threads": args.threads})
    ):
        parser.error(problem)
    from pipeline.games import make_game  # the game's rules, then torch: after the arguments' own errors

    games = re.split(r",(?![^()]*\))", args.games) if args.games else []  # commas inside a game's options stay
    for name in games:
        try:
            make_game(name)
        except ValueError as err:
            parser.error(f"--games: {err}")
    from pipeline.jobs.throughput import (
        FULL,
        QUICK,
        busy_process,
        default_games,
        run,
        with_load_figures,
    )
    from pipeline.plumbing.threads import use_threads

    use_threads(args.threads)
    if args.phases:
        print(_phase_tables(games or default_games(), args.batch // 2, args.networks))
        return
    budgets = {
        **(QUICK if args.quick else FULL),
        "backend": args.backend,
        "precision": args.precision,
        "device": args.device,
        "inference_server": args.inference_server,
        "batch": args.batch,
        "games": tuple(games),
        "networks": args.networks,
    }
    if args.load:
        quiet = run(**budgets)
        with busy_process():
            figures = with_load_figures(quiet, run(**budgets))
    else:
        figures = run(**budgets)
    print(json.dumps(figures, indent=2) if args.json else _table(figures))


if __name__ == "__main__":
    main()
