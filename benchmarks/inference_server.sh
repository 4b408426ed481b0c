#!/bin/bash
# Issue 52: self-play with and without the inference server on one machine, in one run (a GPU machine:
# every worker its own CUDA copy against one server; a CPU machine: the same with the network on the CPU).
# Each line of the output folder is `bench --quick --json` for the default games (Tic-Tac-Mo, Connect-4,
# 4-player Kingdomino): search_sims_per_s against network_positions_per_s, and with the server its
# server_batch_fill (positions a network call) and server_busy_fraction.
# Usage: benchmarks/inference_server.sh OUT_FOLDER [BATCH_WITHOUT_SERVER]   (256 suits a GPU, 64 a CPU)
set -euo pipefail
out=${1:?an output folder}; batch=${2:-64}
mkdir -p "$out"
python -m pipeline bench --quick --json --inference-server off --batch "$batch" > "$out/without_server.json"
python -m pipeline bench --quick --json --inference-server on --batch 64 > "$out/with_server.json"
python - "$out" <<'PY'
import json, sys
out = sys.argv[1]
runs = {name: json.load(open(f"{out}/{name}.json")) for name in ("without_server", "with_server")}
for game, figures in runs["with_server"].items():
    if isinstance(figures, dict):
        before = runs["without_server"][game]
        print(f"{game}: {before['search_sims_per_s']:,.0f} -> {figures['search_sims_per_s']:,.0f} sims/s "
              f"(network alone {figures['network_positions_per_s']:,.0f} positions/s), batch fill "
              f"{figures['server_batch_fill']:.1f}, server busy {figures['server_busy_fraction']:.0%}")
PY
