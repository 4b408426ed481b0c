"""The teacher's probe, outside the pipeline: a network trained from scratch on the greedy player's games
against itself (policy target greedy's move one-hot, value target each game's outcome under the run's
value scheme, from the mover's seat), fitted as a generation's window is, and saved as a checkpoint to
play with `python -m pipeline match OUT greedy --params PARAMS`. Prints the games' positions and the
seconds and losses of the fit. The pipeline has done the same since as `teacher.player: greedy`
(pipeline/jobs/teacher.py), which this probe led to.

Cited by docs/results/kingdomino-teacher.md ("The probe": 2,000 2-player greedy games, 4 epochs, 0.500
against greedy). Written as kd-imitate/imitate.py of the Kingdomino archive of issue 36 (studies/README.md: git history
only), made to run from a clone with named arguments.

Usage: python benchmarks/kingdomino_imitate.py PARAMS OUT.ckpt [--games 2000] [--epochs 4]"""

import argparse
import time

import numpy as np
import torch

from pipeline.agents.recipes import search_config
from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.jobs.selfplay import compact_planes
from pipeline.jobs.train import train_network
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import initial_network


def greedy_samples(game, end_value, games: int) -> tuple[list, list, list]:
    """Every position of `games` greedy games (seeds 1000 on), greedy's move, and the outcome from the
    mover's seat."""
    states, actions, values = [], [], []
    for seed in range(games):
        rng = np.random.default_rng(seed + 1000)
        state, movers = game.initial_state(rng), []
        while not game.is_terminal(state):
            action = game.greedy_action(state)
            states.append(state)
            actions.append(action)
            movers.append(game.to_play(state))
            state, _ = game.step(state, action, rng)
        outcome = end_value(state)
        values += [rotate_to_mover(outcome, mover) for mover in movers]
    return states, actions, values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("params", help="the run's params: game, network, value scheme, training")
    parser.add_argument("out", help="the checkpoint written")
    parser.add_argument("--games", type=int, default=2000, help="greedy games against itself")
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    params = load_params(args.params)
    game = make_game(params.game)

    started = time.time()
    states, actions, values = greedy_samples(game, search_config(params).end_value(game), args.games)
    print(f"{args.games} greedy games, {len(states)} positions, {time.time() - started:.0f} s", flush=True)
    started = time.time()
    planes = np.concatenate([game.encode_batch(states[i : i + 4096]) for i in range(0, len(states), 4096)])
    policies = np.zeros((len(states), game.num_actions), np.float32)
    policies[np.arange(len(states)), actions] = 1
    samples = {
        "states": compact_planes(planes),
        "policies": policies,
        "values": np.stack(values).astype(np.float32),
        "generations": np.zeros(len(states), np.int32),
    }
    print(f"encoded in {time.time() - started:.0f} s", flush=True)

    model = initial_network(game, params)
    started = time.time()
    train = params.train.model_copy(update={"epochs": args.epochs})
    result = train_network(game, model, samples, train, seed=0, progress=True, device="cpu")
    print(
        f"trained {args.epochs} epochs in {time.time() - started:.0f} s: "
        f"policy {result.policy_loss:.3f} value {result.value_loss:.3f}",
        flush=True,
    )
    save_checkpoint(args.out, model, game.name)


if __name__ == "__main__":
    main()
