"""What does a move's time buy? At the positions of one greedy game, each player gets the same seconds a
move: a network's search (as its params say, and on its value alone, w = 0) counts its simulations,
flat Monte Carlo (`mce`) its greedy playouts. Why the equal-time matches of issue 51 go as they do: a
timed search grows one tree, one leaf a network call, while `mce` plays compiled playouts in batches.

Usage: python benchmarks/kingdomino_timed_budget.py CHECKPOINT PARAMS [--move-time 0.25] [--positions 24]
Run it on quiet cores with one torch thread, as a match's worker plays; prints one JSON line."""

import argparse
import json

import numpy as np
import torch

from pipeline import champions
from pipeline.agents.monte_carlo import MonteCarloAgent
from pipeline.agents.recipes import champion_player
from pipeline.config import TIMED_SIMULATIONS, load_params
from pipeline.games import make_game
from pipeline.nets.checkpoint import load_checkpoint


def positions(game, count: int, seed: int) -> list:
    """The first `count` positions with a choice (more than one legal move) of a greedy game."""
    rng, found = np.random.default_rng(seed), []
    state = game.initial_state(rng)
    while len(found) < count and not game.is_terminal(state):
        if len(game.legal_actions(state)) > 1:
            found.append(state)
        state, _ = game.step(state, int(game.greedy_action(state)), rng)
    return found


def simulations_a_move(spec, game, states, seed: int) -> float:
    agent = spec.build(game)
    for game_id, state in enumerate(states):
        agent.begin(game_id, state, np.random.default_rng([seed, game_id]))
        agent.act([game_id])
        agent.end(game_id)
    return agent.simulations / len(states)


def playouts_a_move(game, states, seconds: float, seed: int) -> float:
    agent = MonteCarloAgent(game, 0, "mce", seconds)
    for k, state in enumerate(states):
        agent.choose(state, np.random.default_rng([seed, k]))
    return agent.played / len(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint")
    parser.add_argument("params")
    parser.add_argument("--move-time", type=float, default=0.25)
    parser.add_argument("--positions", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    params = load_params(args.params)
    game = make_game(params.game)
    model = load_checkpoint(champions.resolve(args.checkpoint), game.name)
    states = positions(game, args.positions, args.seed)
    without_playouts = params.search.model_copy(update={"greedy_playout_weight": 0.0})
    network_alone = params.model_copy(update={"search": without_playouts})
    simulations = {  # at most match's cap a timed move, as `match --move-time` plays
        f"w={weight}": simulations_a_move(
            champion_player("az", model, searched, TIMED_SIMULATIONS, args.move_time), game, states, args.seed
        )
        for weight, searched in [(params.search.greedy_playout_weight, params), (0.0, network_alone)]
    }
    figures = {
        "move_time": args.move_time,
        "positions": len(states),
        "search_simulations_a_move": simulations,
        "mce_playouts_a_move": playouts_a_move(game, states, args.move_time, args.seed),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
