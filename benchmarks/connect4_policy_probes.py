"""Probes of why the raw Connect-4 policy stops at about 2% mistakes on Pons' Middle-Easy set
(docs/results/connect4-strength.md, "Why the raw policy stops on Middle-Easy"): does it lack training
(more epochs on the same window), positions like Pons' (random-play boards labelled by search), or width (fresh 5 x 64
and 5 x 128 nets on the same samples), what does width cost in self-play speed, and does averaging the
policy over the board and its mirror help (`mirror`)? Score each checkpoint with
`python -m pipeline connect4_benchmark CKPT --sims 0 --positions 1000 --precision bfloat16`.

Usage:
  python benchmarks/connect4_policy_probes.py label CKPT OUT.npz --count 60000 --seed 12345
  python benchmarks/connect4_policy_probes.py finetune RUN GEN OUT.ckpt --epochs 4 [--extra LABELS.npz]
  python benchmarks/connect4_policy_probes.py fresh RUN OUT.ckpt --channels 128 --epochs 3 SAMPLES.npz ...
      [--blocks 5] [--device cuda]
  python benchmarks/connect4_policy_probes.py agree LABELS.npz CKPT ...
  python benchmarks/connect4_policy_probes.py speed RUN CKPT ... --games 256
  python benchmarks/connect4_policy_probes.py mirror CKPT --positions 1000

RUN is a run folder of `examples/connect4.yaml` (README, "Long runs"), whose params give the training
recipe and the self-play; GEN one of its generations."""

import argparse
from typing import get_args

import numpy as np
import torch
from tqdm import tqdm

from pipeline import champions
from pipeline.config import Device, load_params
from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.games.connect.experiments.pons import mistake_rates, read_set, resolve_files
from pipeline.games.connect.positions import CONNECT4
from pipeline.games.moves import read_position
from pipeline.harness.entry import entry_point
from pipeline.jobs.replay import load_samples, save_samples
from pipeline.jobs.selfplay import random_moves, run_selfplay
from pipeline.jobs.train import train_network
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint
from pipeline.nets.evaluator import NetworkEvaluator, frozen_for_inference
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.search.analysis import search_positions
from pipeline.search.mcts import SearchConfig

GAME = make_game("connect4")
PLIES = (6, 34)  # Pons' sets hold plies 4-41; Middle-Easy 15-28
BATCH = 512  # trees searched side by side


def random_boards(count: int, seed: int) -> list:
    """Boards after a uniformly drawn number of uniformly random moves, stopping before a move that
    ends the game (Pons' way of making test positions), none of them a position of Pons' sets."""
    held_out = {
        GAME.encode_batch([read_position(GAME, moves)[1]]).tobytes()
        for path in CONNECT4.glob("Test_L*")
        for moves, _ in read_set(path)
    }
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < count:
        state = random_moves(GAME, GAME.initial_state(rng), rng.integers(PLIES[0], PLIES[1] + 1), rng)
        if GAME.encode_batch([state]).tobytes() not in held_out:
            boards.append(state)
    return boards


def label(args) -> None:
    """Samples whose targets are the network's search without noise: visits and root value."""
    evaluator = NetworkEvaluator(GAME, load_checkpoint(args.checkpoint, GAME.name), "bfloat16")
    config = SearchConfig(c_puct=2.0, precision="bfloat16")
    boards = random_boards(args.count, args.seed)
    policies, values = [], []
    for start in tqdm(range(0, len(boards), BATCH), desc="labelling"):
        chunk = boards[start : start + BATCH]
        _, visits, root_values = search_positions(GAME, evaluator, chunk, args.sims, config)
        policies.append(visits)
        values += [rotate_to_mover(v, GAME.to_play(s)) for v, s in zip(root_values, chunk)]
    save_samples(
        args.out,
        {
            "states": GAME.encode_batch(boards).astype(np.uint8),
            "policies": np.concatenate(policies).astype(np.float32),
            "values": np.stack(values).astype(np.float32),
            "generations": np.full(len(boards), args.generation, dtype=np.int32),
        },
    )


def concatenated(paths: list[str]) -> dict[str, np.ndarray]:
    parts = [load_samples(path) for path in paths]
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def train(model: SENet, run: str, samples: dict, epochs: int, seed: int, out: str, device: str = "cpu") -> None:
    """The run's own training recipe (batch, rate, schedule, merging, symmetries), `epochs` passes."""
    params = load_params(f"{run}/params.yaml").train.model_copy(update={"epochs": epochs})
    result = train_network(GAME, model, samples, params, seed=seed, progress=True, device=device)
    losses = f"{result.policy_loss:.4f} / {result.value_loss:.4f}"
    print(f"{result.samples} samples, last epoch's policy / value loss {losses}")
    save_checkpoint(out, model, GAME.name)


def finetune(args) -> None:
    """Generation GEN's candidate trained further on the replay window it was trained on (plus extra samples)."""
    model = load_checkpoint(f"{args.run}/models/candidate/gen_{args.gen}.ckpt", GAME.name)
    samples = concatenated([f"{args.run}/data/replay/gen_{args.gen}.npz", *args.extra])
    train(model, args.run, samples, args.epochs, 1000 + args.gen, args.out)


def fresh(args) -> None:
    """A net of the given depth and width from random weights (seed 0), trained on fixed samples."""
    torch.manual_seed(0)
    model = SENet(NetworkShape.for_game(GAME, args.blocks, args.channels, 4))
    train(model, args.run, concatenated(args.samples), args.epochs, 7, args.out, args.device)


def speed(args) -> None:
    """Self-play simulations a second of each network under the run's self-play params, twice over."""
    params = load_params(f"{args.run}/params.yaml")
    params = params.model_copy(update={"selfplay": params.selfplay.model_copy(update={"games": args.games})})
    models = {path: load_checkpoint(path, GAME.name) for path in args.checkpoints}
    for _ in range(2):
        for path, model in models.items():
            result = run_selfplay(GAME, model, params, 1, progress=False)
            print(f"{path}: {result.simulations / result.playing_seconds:.0f} simulations/s")


def agree(args) -> None:
    """How often the raw policy's favourite is the search's, among the moves the search visited, over
    all labels and over the sharp ones (one move took more than 80% of the visits)."""
    labels = load_samples(args.labels)
    visited = labels["policies"] > 0
    sharp = labels["policies"].max(axis=1) > 0.8
    states = torch.from_numpy(labels["states"].astype(np.float32))
    for path in args.checkpoints:
        model = load_checkpoint(path, GAME.name).eval()
        with torch.no_grad():
            logits = torch.cat([model(states[i : i + 4096])[0] for i in range(0, len(states), 4096)]).numpy()
        same = np.where(visited, logits, -np.inf).argmax(axis=1) == labels["policies"].argmax(axis=1)
        print(f"{path}: agrees on {same.mean():.2%} of all, {same[sharp].mean():.2%} of the {sharp.mean():.0%} sharp")


class MirrorAveraged:
    """The raw network with its policy averaged over the board and the board mirrored left to right
    (the policy mirrored back), as KataGo averages symmetries at inference; values as the plain board's."""

    def __init__(self, model: SENet):
        self.model = frozen_for_inference(model, GAME)

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        planes = torch.from_numpy(GAME.encode_batch(states))
        with torch.inference_mode():
            logits, values = self.model(planes)
            mirrored = self.model(torch.flip(planes, (-1,)))[0].flip(-1)
        mean = (torch.softmax(logits, -1) + torch.softmax(mirrored, -1)) / 2
        return mean.log().numpy(), values.numpy()


def mirror(args) -> None:
    """Raw-policy mistakes on Pons' default sets, plain and averaged with the mirrored board."""
    model = load_checkpoint(champions.resolve(args.checkpoint), GAME.name)
    files = resolve_files(None, [])
    for name, evaluator in (("plain", NetworkEvaluator(GAME, model)), ("mirror-averaged", MirrorAveraged(model))):
        rows = mistake_rates(GAME, evaluator, files, args.positions, [0])
        per_set = ", ".join(f"{r['set']} {r['mistakes']}" for r in rows)
        print(f"{name}: {per_set} = {sum(r['mistakes'] for r in rows)}")


@entry_point
def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(required=True)
    p = commands.add_parser("label")
    p.add_argument("checkpoint")
    p.add_argument("out")
    p.add_argument("--count", type=int, default=60000)
    p.add_argument("--seed", type=int, default=12345)
    p.add_argument("--sims", type=int, default=100)
    p.add_argument("--generation", type=int, default=15, help="the samples' generation field (a window's last)")
    p.set_defaults(command=label)
    p = commands.add_parser("finetune")
    p.add_argument("run")
    p.add_argument("gen", type=int)
    p.add_argument("out")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--extra", nargs="*", default=[])
    p.set_defaults(command=finetune)
    p = commands.add_parser("fresh")
    p.add_argument("run")
    p.add_argument("out")
    p.add_argument("samples", nargs="+")
    p.add_argument("--channels", type=int, default=64)
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--device", choices=get_args(Device), default="cpu", help="where it trains")
    p.add_argument("--epochs", type=int, default=3)
    p.set_defaults(command=fresh)
    p = commands.add_parser("speed")
    p.add_argument("run")
    p.add_argument("checkpoints", nargs="+")
    p.add_argument("--games", type=int, default=256)
    p.set_defaults(command=speed)
    p = commands.add_parser("agree")
    p.add_argument("labels")
    p.add_argument("checkpoints", nargs="+")
    p.set_defaults(command=agree)
    p = commands.add_parser("mirror")
    p.add_argument("checkpoint", help="a checkpoint file or a shipped champion's name")
    p.add_argument("--positions", type=int, default=1000)
    p.set_defaults(command=mirror)
    args = parser.parse_args(argv)
    args.command(args)


if __name__ == "__main__":
    main()
