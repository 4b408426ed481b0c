"""Does a larger SENet learn more from the same self-play? (issue 51's capacity probe)

Trains a BLOCKS x CHANNELS SENet from random weights on a run's self-play of generations FIRST..LAST
(its replay window), with the run's train settings but `--epochs`, prints one JSON line with its losses
on generation HELD's self-play (not trained on), and saves it to OUT for `python -m pipeline match`.
With `--checkpoint` instead of a shape it only measures that network's held-out losses.

Usage: python benchmarks/kingdomino_capacity_probe.py RUN FIRST LAST HELD (--shape 6x64 --epochs 3 --out
OUT.ckpt | --checkpoint CKPT)"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.jobs.replay import load_samples
from pipeline.jobs.train import train_network
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint
from pipeline.nets.module import alphazero_losses
from pipeline.nets.senet import NetworkShape, SENet

BATCH = 1024  # held-out positions a forward pass

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("run", type=Path, help="a run folder: params.yaml and data/selfplay/gen_G.npz")
parser.add_argument("first", type=int)
parser.add_argument("last", type=int)
parser.add_argument("held", type=int)
parser.add_argument("--shape", default="4x32", help="BLOCKSxCHANNELS")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--out", type=Path)
parser.add_argument("--checkpoint", type=Path, help="measure this network instead of training one")
args = parser.parse_args()
params = load_params(args.run / "params.yaml")
game = make_game(params.game)
figures: dict = {"train": f"{args.first}-{args.last}", "held": args.held}
started = time.time()
if args.checkpoint:
    model = load_checkpoint(args.checkpoint, game.name)
    figures["network"] = str(args.checkpoint)
else:
    window = [load_samples(args.run / f"data/selfplay/gen_{g}.npz") for g in range(args.first, args.last + 1)]
    samples = {key: np.concatenate([part[key] for part in window]) for key in ("states", "policies", "values")}
    blocks, channels = (int(number) for number in args.shape.split("x"))
    torch.manual_seed(0)
    model = SENet(NetworkShape.for_game(game, blocks, channels, 4))
    fit = train_network(game, model, samples, params.train.model_copy(update={"epochs": args.epochs}), seed=0)
    save_checkpoint(args.out, model, game.name)
    figures |= {"network": args.shape, "epochs": args.epochs, "samples": len(samples["states"])}
    figures |= {"train_policy_loss": fit.policy_loss, "train_value_loss": fit.value_loss}
held = load_samples(args.run / f"data/selfplay/gen_{args.held}.npz")
model.eval()
totals = np.zeros(2)
with torch.inference_mode():
    for start in range(0, len(held["states"]), BATCH):
        batch = {key: torch.from_numpy(held[key][start : start + BATCH]) for key in ("states", "policies", "values")}
        losses = alphazero_losses(model, batch["states"].float(), batch["policies"], batch["values"])
        totals += [loss.item() * len(batch["states"]) for loss in (losses.policy, losses.value)]
policy, value = totals / len(held["states"])
figures |= {"held_policy_loss": policy, "held_value_loss": value, "seconds": round(time.time() - started)}
print(json.dumps(figures))
