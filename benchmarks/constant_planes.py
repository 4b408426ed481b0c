"""Kingdomino's 4x32 SENet as search runs it (traced and frozen, batch 64, one torch thread), with its 150
constant planes convolved (`constant_planes: 0`, the shape before commit db42e6b of 2026-11-27) against read
as a vector, alternated `--rounds` times since a shared machine's speed drifts. Prints one JSON line per measurement.

Usage: python benchmarks/constant_planes.py [--rounds 3] [--seconds 6]"""

import argparse
import dataclasses
import json

import torch

from pipeline.commands.bench import bench_network, network_positions_per_s
from pipeline.nets.senet import SENet

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--seconds", type=float, default=6.0)
args = parser.parse_args()
torch.set_num_threads(1)
game, vector = bench_network("kingdomino(players=4)")
torch.manual_seed(0)
convolved = SENet(dataclasses.replace(vector.shape, constant_planes=0)).eval()
for round_ in range(args.rounds):
    for stem, model in (("convolved", convolved), ("vector", vector)):
        speed = network_positions_per_s(game, model, 64, args.seconds)
        print(json.dumps({"round": round_, "stem": stem, "positions_per_s": round(speed)}), flush=True)
