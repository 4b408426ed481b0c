"""Positions analysed in one batch: the policy over all actions, the value vector in absolute seats
and the move chosen, by the raw network (`sims` 0) or by search."""

from __future__ import annotations

import numpy as np

from pipeline.games import Game
from pipeline.games.base import to_absolute
from pipeline.search.gumbel import GumbelSearch
from pipeline.search.mcts import BatchedSearch, SearchConfig, masked_softmax


def analyse(game: Game, evaluator, states: list, sims: int, config: SearchConfig | None = None):
    """Policies over all actions and value vectors in absolute seats, one row per state, in one batch
    (search with `config`, default settings if None).

    Every tree draws dice inside search from its own generator with one fixed seed, so a line's answer
    does not depend on the lines searched beside it."""
    _, policies, values = search_positions(game, evaluator, states, sims, config)
    return policies, values


def search_positions(game: Game, evaluator, states: list, sims: int, config: SearchConfig | None = None):
    """`analyse` with the move each row's chooser plays: the most probable legal move of the raw
    policy (`sims` 0), the most visited one (PUCT), or sequential halving's choice (`root: gumbel`,
    no noise; its policy is the improved policy, whose argmax may differ)."""
    if sims == 0:
        logits, values = evaluator.evaluate(states)
        legal = np.stack([game.legal_mask(s) for s in states])
        movers = np.array([game.to_play(s) for s in states])
        policies = masked_softmax(np.asarray(logits, dtype=np.float32), legal)
        return _argmax_legal(game, states, policies), policies, to_absolute(np.asarray(values), movers)
    config = config or SearchConfig()
    search = BatchedSearch(game, evaluator, config)
    forest = search.new_forest(2 * sims + 16, len(states))  # a simulation adds at most two nodes (chance, outcome)
    slots = [forest.new_tree(s, np.random.default_rng(0)) for s in states]
    if config.root == "gumbel":
        choices = GumbelSearch(search).run(forest, slots, [sims] * len(slots), [False] * len(slots))
        moves, policies = [c.action for c in choices], np.stack([c.policy for c in choices])
    else:
        search.run(forest, slots, sims)
        visits = np.stack([forest.root_visits(slot) for slot in slots]).astype(np.float64)
        policies = visits / visits.sum(axis=1, keepdims=True)
        moves = _argmax_legal(game, states, policies)
    return moves, policies, np.stack([forest.root_value(slot) for slot in slots])


def _argmax_legal(game: Game, states: list, policies: np.ndarray) -> list[int]:
    return [max(game.legal_actions(state), key=lambda a: policy[a]) for state, policy in zip(states, policies)]
