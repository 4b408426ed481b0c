"""KataGo's forced playouts and policy target pruning (Wu 2019, "Accelerating Self-Play Learning in
Go", section 3.1), for PUCT searches with root noise (self-play).

Forced playouts: each root child c gets at least n_forced(c) = sqrt(k P(c) N) of the root's N
playouts (P the noised prior), so a move the noise favours is looked at long enough to be found good.
Those playouts would teach the policy its own noise, so the policy target takes them back: every child
but the most visited loses as many playouts as it can, up to its forced ones, while its PUCT score stays
below the most visited child's; a child left with one playout is dropped. The move itself is still
chosen from the raw visit counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from pipeline.search.forest import Forest


def forced_root_actions(forest: Forest, slots: list[int], noisy: list[bool], k: float) -> Callable[[int], np.ndarray]:
    """A `BatchedSearch.simulate` root hook: for each noisy tree, the root child furthest below its
    forced playouts (-1, PUCT's choice, when none is below or the tree has no noise)."""
    roots = forest.roots[np.asarray(slots)]
    priors = forest.root_priors[np.asarray(slots)].astype(np.float64)
    eligible = forest.legal[roots] & (priors > 0) & np.asarray(noisy)[:, None]

    def actions(step: int) -> np.ndarray:
        visits = forest.visits[roots]
        deficit = np.sqrt(k * priors * visits.sum(axis=1, keepdims=True)) - visits
        deficit = np.where(eligible & (deficit > 0), deficit, -np.inf)
        return np.where(np.isfinite(deficit.max(axis=1)), deficit.argmax(axis=1), -1)

    return actions


def pruned_policy(forest: Forest, slot: int, c_puct: float, k: float) -> np.ndarray:
    """The root's visit distribution with the forced playouts that did not pay off taken back."""
    root = forest.roots[slot]
    visits = forest.visits[root].astype(np.float64)
    priors = forest.root_priors[slot].astype(np.float64)
    q = forest.value_sums[root, :, forest.players[root]] / np.maximum(visits, 1)
    total, best = visits.sum(), int(np.argmax(visits))
    exploration = c_puct * priors * math.sqrt(max(total, 1))
    best_score = q[best] + exploration[best] / (1 + visits[best])
    target = visits.copy()
    for child in np.flatnonzero(visits > 0):
        if child == best or q[child] >= best_score:
            continue
        # the fewest playouts at which the child's PUCT score is still below the best child's
        needed = math.ceil(exploration[child] / (best_score - q[child]) - 1)
        target[child] = min(
            visits[child], max(visits[child] - math.floor(math.sqrt(k * priors[child] * total)), needed)
        )
        if target[child] <= 1:
            target[child] = 0
    return target / target.sum()
