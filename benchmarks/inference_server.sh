#!/bin/bash
# Issue 52: self-play with and without the inference server on one machine, in one run (a GPU machine:
# every worker its own CUDA copy against one server; a CPU machine: the same with the network on the CPU),
# then the cores alone (`--device cpu`), which the Kingdomino goal (10x the cores alone) is set against.
# Each file of the output folder is `bench --quick --json` for the default games (Tic-Tac-Mo, Connect-4,
# 4-player Kingdomino): search_sims_per_s against network_positions_per_s, with the server its
# server_batch_fill (positions a network call) and server_busy_fraction, and the search's own ceiling
# (one process with a free network: no server can take a core past it). The most needed runs go first,
# so a run cut short by its time limit still leaves them.
# Usage: benchmarks/inference_server.sh OUT_FOLDER [BATCH_WITHOUT_SERVER]   (256 suits a GPU, 64 a CPU)
set -euo pipefail
out=${1:?an output folder}; batch=${2:-64}
mkdir -p "$out"
python -m pipeline bench --quick --json --inference-server off --batch "$batch" > "$out/without_server.json"
python -m pipeline bench --quick --json --inference-server on --batch 64 > "$out/with_server.json"
python -m pipeline bench --quick --json --device cpu --batch 64 > "$out/cores_alone.json"
python - "$out" <<'PY'
import json, sys
out = sys.argv[1]
runs = {name: json.load(open(f"{out}/{name}.json")) for name in ("without_server", "with_server", "cores_alone")}
for game, served in runs["with_server"].items():
    if isinstance(served, dict):
        before, alone = runs["without_server"][game], runs["cores_alone"][game]
        bound = runs["cores_alone"]["cpu_count"] * alone["one_process_search_ceiling_sims_per_s"] / alone["search_sims_per_s"]
        print(f"{game}: {before['search_sims_per_s']:,.0f} -> {served['search_sims_per_s']:,.0f} sims/s "
              f"({served['search_sims_per_s'] / alone['search_sims_per_s']:.1f}x the cores alone, "
              f"{alone['search_sims_per_s']:,.0f}; at most {bound:.1f}x: every core at the search's "
              f"ceiling); network alone {served['network_positions_per_s']:,.0f} positions/s; batch fill "
              f"{served['server_batch_fill']:.1f}, server busy {served['server_busy_fraction']:.0%}")
PY
