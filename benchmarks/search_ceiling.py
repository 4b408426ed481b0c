"""One process's search ceiling per default bench game: self-play simulations/s with a network that
answers for free (`bench.search_ceiling_sims_per_s`), one torch thread, the best of `--rounds`, as one
JSON line. For before/after figures of the search's own cost a simulation, which bounds what an
inference server can give (docs/results/inference-server.md).

Usage: python benchmarks/search_ceiling.py [--rounds 3]"""

import argparse
import json

from pipeline.commands import bench
from pipeline.threads import use_threads

GAMES = {"tictacmo": 64, "connect4": 64, "kingdomino(players=4,fit=1)": 32}  # name: games side by side

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--rounds", type=int, default=3)
args = parser.parse_args()
use_threads(1)
best = {}
for name, games in GAMES.items():
    _, model = bench.bench_network(name)
    bench.search_ceiling_sims_per_s(name, model, 4, 4)  # the compiled kernels load
    best[name] = round(max(bench.search_ceiling_sims_per_s(name, model, games, games) for _ in range(args.rounds)))
print(json.dumps(best))
