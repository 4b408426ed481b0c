"""One game's search tree as a flat node pool: arrays indexed by node, no per-node Python objects.

Edge statistics live on the parent (visits[node, a], value_sums[node, a, seat]) in absolute seats, so
a backup is a plain add along the path and every node's player reads its own entry (max^n).
"""

from __future__ import annotations

import numpy as np


class Tree:
    def __init__(self, game, root_state, rng: np.random.Generator, capacity: int = 64):
        self.game = game
        self.rng = rng
        actions, players = game.num_actions, game.num_players
        self.visits = np.zeros((capacity, actions), dtype=np.int32)
        self.value_sums = np.zeros((capacity, actions, players), dtype=np.float64)
        self.priors = np.zeros((capacity, actions), dtype=np.float32)
        self.children = np.full((capacity, actions), -1, dtype=np.int32)
        self.legal = np.zeros((capacity, actions), dtype=bool)
        self.players = np.zeros(capacity, dtype=np.int64)
        self.expanded = np.zeros(capacity, dtype=bool)
        self.terminal_values: dict[int, np.ndarray] = {}
        self.states: list = []
        self.root_priors: np.ndarray | None = None  # the root's priors with exploration noise
        self.root = self.add_node(root_state)

    @property
    def root_state(self):
        return self.states[self.root]

    def _grow(self) -> None:
        def doubled(array: np.ndarray, fill) -> np.ndarray:
            extra = np.full_like(array, fill)
            return np.concatenate([array, extra])

        self.visits = doubled(self.visits, 0)
        self.value_sums = doubled(self.value_sums, 0.0)
        self.priors = doubled(self.priors, 0.0)
        self.children = doubled(self.children, -1)
        self.legal = doubled(self.legal, False)
        self.players = doubled(self.players, 0)
        self.expanded = doubled(self.expanded, False)

    def add_node(self, state) -> int:
        node = len(self.states)
        if node == len(self.players):
            self._grow()
        self.states.append(state)
        if self.game.is_terminal(state):
            self.terminal_values[node] = self.game.scores(state).astype(np.float64)
        else:
            self.players[node] = self.game.to_play(state)
            self.legal[node] = self.game.legal_mask(state)
        return node

    def expand(self, node: int, priors: np.ndarray) -> None:
        self.priors[node] = priors
        self.expanded[node] = True

    def child(self, node: int, action: int) -> tuple[int, bool]:
        """The child reached by `action`, created on first use; also whether it is new."""
        child = self.children[node, action]
        if child >= 0:
            return int(child), False
        state, _ = self.game.step(self.states[node], action, self.rng)
        child = self.add_node(state)
        self.children[node, action] = child
        return child, True

    def backup(self, path: list[tuple[int, int]], value: np.ndarray) -> None:
        for node, action in path:
            self.visits[node, action] += 1
            self.value_sums[node, action] += value

    def root_visits(self) -> np.ndarray:
        return self.visits[self.root].copy()

    def root_value(self) -> np.ndarray:
        """Mean backed-up value vector at the root, absolute seats."""
        visits = self.visits[self.root]
        return self.value_sums[self.root].sum(axis=0) / max(int(visits.sum()), 1)

    def advance(self, action: int, state) -> bool:
        """Make the child reached by `action` the root, keeping its searched subtree (tree reuse).

        Sound only if that child holds the state the game actually reached; returns False otherwise.
        """
        child = self.children[self.root, action]
        if child < 0 or self.states[child] != state:
            return False
        self.root = int(child)
        self.root_priors = None
        return True
