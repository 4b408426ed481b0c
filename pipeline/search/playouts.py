"""Player-greedy playouts: a game played to its end by the game's own greedy move for every seat, and
leaf values that mix one such playout's outcome into the network's (`search.greedy_playout_weight`).

Why: AlphaGo judged a leaf by (1 - lambda) v + lambda z, its value network's v and the outcome z of one
fast rollout (Silver et al. 2016, lambda = 0.5). In Kingdomino the anchor's strongest player is flat
Monte Carlo with player-greedy playouts (Gedda et al. 2018), and a playout also passes every draw to the
game's end, sampling the chance events that cut the tree (seed 001's question). A network that has not
yet learnt to read picks gains from a judge that plays them out. The playout draws its chance events
from the tree's own generator, so a game's search stays reproducible whatever games share its batch."""

from __future__ import annotations

from typing import Any

import numpy as np


def greedy_playout(game, state: Any, rng: np.random.Generator) -> Any:
    """The finished game reached from `state` by the game's `greedy_action` in every seat."""
    while not game.is_terminal(state):
        state, _ = game.step(state, game.greedy_action(state), rng)
    return state


def check_playouts(game, weight: float) -> None:
    """One line where a search asks for playouts the game cannot play."""
    if weight > 0 and not hasattr(game, "greedy_action"):
        raise ValueError(
            f"search.greedy_playout_weight: game {game.name!r} has no player-greedy policy to play out with"
        )


def mix_playouts(forest, nodes: list[int], values: np.ndarray, weight: float) -> np.ndarray:
    """(1 - weight) `values` + weight the end value of one greedy playout from each node's state, all in
    absolute seats; each playout draws from its tree's generator."""
    outcomes = np.stack(
        [
            forest.end_value(greedy_playout(forest.game, forest.states[node], forest.rngs[node // forest.capacity]))
            for node in nodes
        ]
    )
    return (1 - weight) * values + weight * outcomes
