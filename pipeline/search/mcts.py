"""Batched tree search over many games at once: one leaf per tree per step, one evaluator call.

Selection is PUCT (AlphaZero) or UCB1 (classic UCT); each node's player maximises its own entry of
the backed-up value vector (max^n, seed 000 section 3), so two-player games need no special path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.games.base import rotate_to_absolute
from pipeline.search.evaluator import Evaluator
from pipeline.search.tree import Tree


@dataclass(frozen=True)
class SearchConfig:
    c_puct: float = 3.0
    dirichlet_alpha: float = 1.0
    dirichlet_epsilon: float = 0.25
    selection: str = "puct"  # or "ucb1" for classic UCT
    c_uct: float = 1.41


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    masked = np.where(legal, logits, -np.inf)
    masked = masked - masked.max(axis=-1, keepdims=True)
    exp = np.exp(masked)
    return (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)


class BatchedSearch:
    def __init__(self, game, evaluator: Evaluator, config: SearchConfig):
        self.game = game
        self.evaluator = evaluator
        self.config = config

    # --- selection ---------------------------------------------------------------------------
    def _choose(self, tree: Tree, node: int) -> int:
        player = tree.players[node]
        visits = tree.visits[node]
        total = int(visits.sum())
        value_sums = tree.value_sums[node, :, player]
        legal = tree.legal[node]
        priors = tree.root_priors if node == tree.root and tree.root_priors is not None else tree.priors[node]
        if self.config.selection == "ucb1":
            unvisited = legal & (visits == 0)
            if unvisited.any():
                return int(np.argmax(np.where(unvisited, priors, -np.inf)))
            tried = np.maximum(visits, 1)
            scores = value_sums / tried + self.config.c_uct * np.sqrt(math.log(total) / tried)
        else:
            # Unvisited moves start at the parent's mean value (first-play urgency), not at 0.
            parent_q = value_sums.sum() / total if total else 0.0
            q = np.where(visits > 0, value_sums / np.maximum(visits, 1), parent_q)
            scores = q + self.config.c_puct * priors * math.sqrt(max(total, 1)) / (1 + visits)
        return int(np.argmax(np.where(legal, scores, -np.inf)))

    def _descend(self, tree: Tree):
        """Walk from the root to a leaf; return the path and either a node to evaluate or a known
        terminal value."""
        path: list[tuple[int, int]] = []
        node = tree.root
        while True:
            action = self._choose(tree, node)
            path.append((node, action))
            node, _ = tree.child(node, action)
            if node in tree.terminal_values:
                return path, None, tree.terminal_values[node]
            if not tree.expanded[node]:
                return path, node, None

    # --- evaluation --------------------------------------------------------------------------
    def _evaluate(self, tree_nodes: list[tuple[Tree, int]]) -> list[np.ndarray]:
        """Expand the given (tree, node) pairs with one evaluator call; return absolute values."""
        if not tree_nodes:
            return []
        states = [tree.states[node] for tree, node in tree_nodes]
        logits, values = self.evaluator.evaluate(states)
        legal = np.stack([tree.legal[node] for tree, node in tree_nodes])
        priors = masked_softmax(np.asarray(logits, dtype=np.float32), legal)
        absolute = []
        for i, (tree, node) in enumerate(tree_nodes):
            tree.expand(node, priors[i])
            absolute.append(rotate_to_absolute(np.asarray(values[i], dtype=np.float64), tree.players[node]))
        return absolute

    def _add_root_noise(self, tree: Tree) -> None:
        root = tree.root
        legal = np.flatnonzero(tree.legal[root])
        noise = tree.rng.dirichlet([self.config.dirichlet_alpha] * len(legal))
        eps = self.config.dirichlet_epsilon
        noisy = tree.priors[root].copy()
        noisy[legal] = (1 - eps) * noisy[legal] + eps * noise
        tree.root_priors = noisy

    # --- the loop ----------------------------------------------------------------------------
    def run(self, trees: list[Tree], simulations: int, add_noise: bool = False) -> None:
        """Add `simulations` simulations to every tree; roots must not be terminal."""
        self._evaluate([(t, t.root) for t in trees if not t.expanded[t.root]])
        for tree in trees:
            if add_noise:
                self._add_root_noise(tree)
            else:
                tree.root_priors = None
        for _ in range(simulations):
            pending, pending_paths = [], []
            for tree in trees:
                path, leaf, value = self._descend(tree)
                if leaf is None:
                    tree.backup(path, value)
                else:
                    pending.append((tree, leaf))
                    pending_paths.append(path)
            for (tree, _), path, value in zip(pending, pending_paths, self._evaluate(pending)):
                tree.backup(path, value)
