"""The shipped champions' speed as users run them: self-play simulations a second with each champion's
own params (one process, its games side by side), and the simulations a timed move searches
(`match --move-time`, `play`, the equal-time tests) from positions of real games. Trained weights, not
bench's random ones: weight decay leaves trained networks full of denormal floats, which random
weights never have (pipeline/nets/denormals.py).

It uses only what both sides of issue 61 have, so it measures any checkout: run it from one, then with
`PYTHONPATH` set to another's root, alternating, on a quiet machine (docs/results/onnx-runtime.md).

Usage: python benchmarks/champion_speed.py [--champions connect4 kingdomino] [--games 16] [--moves 12]
[--move-time 0.25] [--threads 1]"""

import argparse
import json
import time

import numpy as np

from pipeline import champions
from pipeline.agents.recipes import search_config
from pipeline.agents.search_agent import PlayConfig, SearchAgent
from pipeline.config import load_params, parse_params
from pipeline.games import make_game
from pipeline.jobs.selfplay import run_selfplay
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.nets.evaluator import NetworkEvaluator
from pipeline.search import CachingEvaluator
from pipeline.threads import use_threads


def champion(name: str):
    params = load_params(champions.params_path(name))
    game = make_game(params.game)
    return game, load_checkpoint(champions.checkpoint_path(name), game.name).eval(), params


def selfplay_sims_per_s(name: str, games: int) -> float:
    """Self-play of one generation with the champion's params, `games` games side by side in one process."""
    game, model, params = champion(name)
    data = params.model_dump(mode="json")
    data.update(workers=1, generations=[{"gen": 1, "prev": 0}])
    data["selfplay"] |= {"games": games, "parallel_games": games}
    data["backend"] |= {"inference_server": "off"}
    result = run_selfplay(game, model, parse_params(data), 1, progress=False)
    return result.metrics["simulations_per_s"]


def timed_move_simulations(name: str, moves: int, seconds: float) -> float:
    """Mean simulations of a `seconds` move by the champion, searching with its params, over the
    positions of a game it plays against itself, one tree at a time."""
    game, model, params = champion(name)
    evaluator = CachingEvaluator(NetworkEvaluator(game, model))
    rng = np.random.default_rng(0)
    state, counts = game.initial_state(rng), []
    agent = SearchAgent(game, evaluator, search_config(params), PlayConfig(simulations=1000, seconds=seconds), "t")
    agent.begin(0, state, rng)
    while len(counts) < moves and not game.is_terminal(state):
        before = agent.simulations
        [(action, _)] = agent.act([0])
        counts.append(agent.simulations - before)
        state, _ = game.step(state, action, rng)
        agent.observe(0, action, state)
    return float(np.mean(counts))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--champions", nargs="+", default=["tictacmo", "connect4", "kingdomino", "kingdomino2"])
    parser.add_argument("--games", type=int, default=16, help="self-play games side by side")
    parser.add_argument("--moves", type=int, default=12, help="timed moves measured")
    parser.add_argument("--move-time", type=float, default=0.25)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: follow the free cores)")
    args = parser.parse_args()
    use_threads(args.threads)
    for name in args.champions:
        started = time.perf_counter()
        figures = {
            "champion": name,
            "selfplay_sims_per_s": round(selfplay_sims_per_s(name, args.games)),
            "timed_move_sims": round(timed_move_simulations(name, args.moves, args.move_time), 1),
        }
        print(json.dumps(figures | {"seconds": round(time.perf_counter() - started, 1)}), flush=True)


if __name__ == "__main__":
    main()
