"""Where Kingdomino's time goes beside the network: self-play seconds for a few games of a run's params
(one worker, one torch thread, the params' own network or its random generation 0), without and with
greedy playouts at the leaves; seconds for greedy-only 4-player games; greedy playouts a second from
the positions of such games, 64 a batch as search asks for them (the playouts `mce` is made of).
Run it before and after a change to the game's code, on the same machine and load, and compare: with
`PYTHONPATH=OTHER_CHECKOUT` it measures that checkout's code (playouts one by one where it has no
batched `greedy_outcomes`).

Usage: python benchmarks/kingdomino_speed.py PARAMS [--checkpoint CKPT] [--games 16] [--greedy-games 20]
       [--playout-weight 0.5]"""

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


def selfplay_seconds(params_path: str, checkpoint: str | None, games: int, playout_weight: float) -> float:
    params = load_params(params_path)
    selfplay = params.selfplay.model_copy(update={"games": games, "parallel_games": games})
    search = params.search.model_copy(update={"greedy_playout_weight": playout_weight})
    params = params.model_copy(update={"workers": 1, "selfplay": selfplay, "search": search})
    game = make_game(params.game)
    model = load_checkpoint(checkpoint, game.name) if checkpoint else initial_network(game, params)
    started = time.perf_counter()
    run_selfplay(game, model, params, 1, False)
    return time.perf_counter() - started


def greedy_seconds(games: int) -> tuple[float, list]:
    """Seconds for `games` greedy games (after one untimed, which loads compiled code), and every fourth
    position they passed."""
    game = make_game("kingdomino(players=4)")
    started, positions = time.perf_counter(), []
    for seed in (games, *range(games)):  # the first, untimed
        if seed == 0:
            started, positions = time.perf_counter(), []
        rng = np.random.default_rng(seed)
        state = game.initial_state(rng)
        while not game.is_terminal(state):
            positions.append(state)
            state, _ = game.step(state, game.greedy_action(state), rng)
    return time.perf_counter() - started, positions[::4]


def playouts_per_s(positions: list, batch: int = 64) -> float:
    """From positions a fresh game object has not seen (no cached kingdoms), after one untimed batch."""
    from pipeline.search import playouts

    game, rng = make_game("kingdomino(players=4)"), np.random.default_rng(0)
    if hasattr(playouts, "greedy_outcomes"):
        playouts.greedy_outcomes(make_game("kingdomino(players=4)"), positions[:1], [rng])
    started = time.perf_counter()
    for i in range(0, len(positions), batch):
        states = positions[i : i + batch]
        if hasattr(playouts, "greedy_outcomes"):
            playouts.greedy_outcomes(game, states, [rng] * len(states))
        else:  # a checkout from before the batched playouts
            [game.scores(playouts.greedy_playout(game, state, rng)) for state in states]
    return len(positions) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("params")
    parser.add_argument("--checkpoint", default=None, help="default: the params' random generation-0 network")
    parser.add_argument("--games", type=int, default=16, help="self-play games, all side by side")
    parser.add_argument("--greedy-games", type=int, default=20)
    parser.add_argument("--playout-weight", type=float, default=0.5, help="the second self-play's")
    args = parser.parse_args()
    torch.set_num_threads(1)
    greedy_s, positions = greedy_seconds(args.greedy_games)
    seconds = [selfplay_seconds(args.params, args.checkpoint, args.games, w) for w in (0.0, args.playout_weight)]
    figures = {
        "selfplay_s": round(seconds[0], 2),
        "selfplay_playouts_s": round(seconds[1], 2),
        "greedy_games_s": round(greedy_s, 3),
        "greedy_playouts_per_s": round(playouts_per_s(positions), 1),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
