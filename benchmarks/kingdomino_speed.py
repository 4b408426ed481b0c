"""Where Kingdomino's time goes beside the network: self-play seconds for a few games of a run's params
(one worker, one torch thread, the params' own network or its random generation 0), and seconds for
greedy-only 4-player games, the playouts `mce` is made of. Run it before and after a change to the
game's code, on the same machine and load, and compare.

Usage: python benchmarks/kingdomino_speed.py PARAMS [--checkpoint CKPT] [--games 16] [--greedy-games 20]"""

import argparse
import json
import time

import numpy as np
import torch

from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.jobs.selfplay import run_selfplay
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.nets.senet import initial_network


def selfplay_seconds(params_path: str, checkpoint: str | None, games: int) -> float:
    params = load_params(params_path)
    selfplay = params.selfplay.model_copy(update={"games": games, "parallel_games": games})
    params = params.model_copy(update={"workers": 1, "selfplay": selfplay})
    game = make_game(params.game)
    model = load_checkpoint(checkpoint, game.name) if checkpoint else initial_network(game, params)
    started = time.perf_counter()
    run_selfplay(game, model, params, 1, False)
    return time.perf_counter() - started


def greedy_seconds(games: int) -> float:
    game = make_game("kingdomino(players=4)")
    started = time.perf_counter()
    for seed in range(games):
        rng = np.random.default_rng(seed)
        state = game.initial_state(rng)
        while not game.is_terminal(state):
            state, _ = game.step(state, game.greedy_action(state), rng)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("params")
    parser.add_argument("--checkpoint", default=None, help="default: the params' random generation-0 network")
    parser.add_argument("--games", type=int, default=16, help="self-play games, all side by side")
    parser.add_argument("--greedy-games", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    figures = {
        "selfplay_s": round(selfplay_seconds(args.params, args.checkpoint, args.games), 2),
        "greedy_games_s": round(greedy_seconds(args.greedy_games), 3),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
