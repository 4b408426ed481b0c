"""The Kingdomino notes' open question on Kingdomino: how much does search add over the raw policy when every row
draw cuts the tree, and which way of searching through the draw plays best? One network, each way of
searching at the same wall time a move as its opponents (`match --move-time`), seated once against
`--opponent` in every other seat (`--first-alone`), every seat order. Prints one JSON line per scheme.

Schemes: the raw policy (1 simulation, no time spent), and search keeping 1, 8 or 64 outcomes per
draw with the Kingdomino notes' eviction, or keeping the first 8 draws fixed (`search.chance_outcomes: fixed`);
and the Kingdomino notes' eviction with each leaf also judged by a greedy playout through every later draw,
half and half with the network's value or alone (`search.greedy_playout_weight` 0.5, 1), from one playout
a leaf or the mean of four (`x4`, `search.greedy_playouts`); `network`
searches on the network's value alone (w = 0), whatever the params say.

Usage: python benchmarks/kingdomino_search.py CHECKPOINT PARAMS [--move-time S] [--opponent mce:0.5s]
       [--games-per-seating N]
       [--schemes raw,evict1,evict8,evict64,fixed8,playouts0.5,playouts1,playouts0.5x4,playouts1x4,network]
The match plays one game at a time in each worker (`workers` of PARAMS, 0: one a core), so on quiet
cores each player has a core's time: issue 51's equal-time test is `--move-time 0.25
--games-per-seating 80 --schemes playouts0.5,network` (4 seatings: 320 games a scheme)."""

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

import yaml

from pipeline.commands.match import main as match

SCHEMES = {
    "raw": None,  # the network's policy alone
    "evict1": {"max_chance_children": 1, "chance_outcomes": "evict"},
    "evict8": {"max_chance_children": 8, "chance_outcomes": "evict"},
    "evict64": {"max_chance_children": 64, "chance_outcomes": "evict"},
    "fixed8": {"max_chance_children": 8, "chance_outcomes": "fixed"},
    "playouts0.5": {"max_chance_children": 8, "chance_outcomes": "evict", "greedy_playout_weight": 0.5},
    "playouts1": {"max_chance_children": 8, "chance_outcomes": "evict", "greedy_playout_weight": 1.0},
    "playouts0.5x4": {
        "max_chance_children": 8,
        "chance_outcomes": "evict",
        "greedy_playout_weight": 0.5,
        "greedy_playouts": 4,
    },
    "playouts1x4": {
        "max_chance_children": 8,
        "chance_outcomes": "evict",
        "greedy_playout_weight": 1.0,
        "greedy_playouts": 4,
    },
    "network": {"max_chance_children": 8, "chance_outcomes": "evict", "greedy_playout_weight": 0.0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("params", help="the params that trained the network (its search settings are varied)")
    parser.add_argument("--move-time", type=float, default=0.5)
    parser.add_argument("--opponent", help="default: mce at the same time a move")
    parser.add_argument("--games-per-seating", type=int, default=2)
    parser.add_argument("--schemes", default=",".join(SCHEMES))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    opponent = args.opponent or f"mce:{args.move_time}s"
    base = yaml.safe_load(Path(args.params).read_text())

    with tempfile.TemporaryDirectory() as folder:
        for scheme in args.schemes.split(","):
            search = SCHEMES[scheme]
            params = Path(folder) / f"{scheme}.yaml"
            params.write_text(yaml.safe_dump({**base, "search": {**base["search"], **(search or {})}}))
            budget = ["--simulations", "1"] if search is None else ["--move-time", str(args.move_time)]
            argv = [args.checkpoint, opponent, "--first-alone", "--params", str(params), "--seed", str(args.seed)]
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                match([*argv, *budget, "--games-per-seating", str(args.games_per_seating)])
            print(json.dumps({"scheme": scheme, "move_time": args.move_time, **json.loads(out.getvalue())}), flush=True)


if __name__ == "__main__":  # the match's workers start by spawn, which imports this file again
    main()
