"""Player-greedy playouts: a game played to its end by the game's own greedy move for every seat, and
leaf values that mix such playouts' outcome into the network's (`search.greedy_playout_weight`, and
`search.greedy_playouts` a leaf).

Why: AlphaGo judged a leaf by (1 - lambda) v + lambda z, its value network's v and the outcome z of one
fast rollout (Silver et al. 2016, lambda = 0.5). In Kingdomino the anchor's strongest player is flat
Monte Carlo with player-greedy playouts (Gedda et al. 2018), and a playout also passes every draw to the
game's end, sampling the chance events that cut the tree (the Kingdomino notes' question). A network that has not
yet learnt to read picks gains from a judge that plays them out. The playout draws its chance events
from the tree's own generator, so a game's search stays reproducible whatever games share its batch."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from pipeline.config import ValueParams
from pipeline.games.base import HasMargins, PlaysGreedy, PlaysOutInBatches, margin_scale, offers
from pipeline.games.values import outcome_value


def greedy_playout(game, state: Any, rng: np.random.Generator) -> Any:
    """The finished game reached from `state` by the game's `greedy_action` in every seat."""
    while not game.is_terminal(state):
        state, _ = game.step(state, game.greedy_action(state), rng)
    return state


def greedy_outcomes(game, states: list, rngs: list) -> tuple[np.ndarray, np.ndarray | None]:
    """(scores, margins) of one greedy playout from each state, each drawing from its generator in
    `rngs`: the game's compiled `greedy_outcomes` where it has one (Kingdomino), else played out here
    (margins None for a game without them)."""
    if offers(game, PlaysOutInBatches):
        return game.greedy_outcomes(states, rngs)
    finals = [greedy_playout(game, state, rng) for state, rng in zip(states, rngs)]
    scores = np.stack([game.scores(final) for final in finals])
    margins = np.stack([game.margins(final) for final in finals]) if offers(game, HasMargins) else None
    return scores, margins


def playout_values(game, states: list, rngs: list, value: ValueParams, play_out=None) -> np.ndarray:
    """The end value under `value`'s scheme (absolute seats) of one greedy playout from each state: what
    a leaf mixes in and what `mce` averages a move's playouts of. `play_out(states, rngs)` gives the
    playouts' (scores, margins): `greedy_outcomes` unless a compiled search plays out from its rows."""
    scores, margins = (play_out or partial(greedy_outcomes, game))(states, rngs)
    return outcome_value(scores, margins, margin_scale(game), value.scheme, value.zero_sum)


def playout_means(game, states: list, rngs: list, count: int, value: ValueParams, play_out=None) -> np.ndarray:
    """The mean end value under `value`'s scheme (absolute seats) of `count` greedy playouts from each
    state, drawn one after another from its generator in `rngs`: the judgement flat Monte Carlo
    gives a position, which a leaf (`search.greedy_playouts`) and a value target
    (`selfplay.playout_value_playouts`) both take. `play_out` as `playout_values`'."""
    if count == 1:  # a mean of one is itself
        return playout_values(game, states, rngs, value, play_out)
    repeated = [state for state in states for _ in range(count)]
    outcomes = playout_values(game, repeated, [rng for rng in rngs for _ in range(count)], value, play_out)
    return outcomes.reshape(len(states), count, -1).mean(axis=1)


def check_playouts(game, weight: float) -> None:
    """One line where a search asks for playouts the game cannot play."""
    if weight > 0 and not offers(game, PlaysGreedy):
        raise ValueError(
            f"search.greedy_playout_weight: game {game.name!r} has no player-greedy policy to play out with"
        )


def mix_playouts(forest, nodes: list[int], values: np.ndarray, config, lent: tuple | None = None) -> np.ndarray:
    """(1 - weight) `values` + weight the mean end value (the config's value scheme) of
    `config.greedy_playouts` greedy playouts from each node's state, all in absolute seats; each
    playout draws from its tree's generator, or where `lent` = (streams, each slot's stream) says the
    generators are lent to compiled draws, from its tree's stream. Several playouts a leaf average out
    the draws that make one playout's outcome noisy, as flat Monte Carlo's many playouts do."""
    slots = [node // forest.capacity for node in nodes]
    rules = forest.rules
    if lent is not None:  # the compiled search's draws: the same numbers as from the generators
        streams, stream_of_slot = lent
        sources, positions = stream_of_slot[slots].tolist(), forest.rows[nodes]
        play_out = partial(rules.playouts_from_streams, streams)
    elif rules is not None and rules.playouts is not None:  # a compiled search plays out from its rows
        sources, positions, play_out = [forest.rngs[slot] for slot in slots], forest.rows[nodes], rules.playouts
    else:
        sources, positions, play_out = [forest.rngs[slot] for slot in slots], [forest.state(n) for n in nodes], None
    means = playout_means(forest.game, positions, sources, config.greedy_playouts, config.value, play_out)
    weight = config.greedy_playout_weight
    return (1 - weight) * values + weight * means
