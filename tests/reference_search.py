"""A deliberately simple search, one Python object per node and one evaluator call per leaf, that
the fast batched engine must reproduce visit for visit (same formulas, same arithmetic order)."""

from __future__ import annotations

import math

import numpy as np

from pipeline.games.base import to_absolute
from pipeline.search.mcts import SearchConfig, masked_softmax


class Node:
    def __init__(self, game, state):
        self.state = state
        self.terminal = game.is_terminal(state)
        self.value = game.scores(state).astype(np.float64) if self.terminal else None
        self.player = None if self.terminal else game.to_play(state)
        self.legal = None if self.terminal else game.legal_mask(state)
        self.priors = None
        self.children: dict[int, Node] = {}
        self.visits = np.zeros(game.num_actions, dtype=np.int64)
        self.value_sums = np.zeros((game.num_actions, game.num_players))

    def choose(self, config: SearchConfig) -> int:
        best, best_score = -1, -math.inf
        total = int(self.visits.sum())
        if config.selection == "ucb1":
            unvisited = [a for a in range(len(self.visits)) if self.legal[a] and self.visits[a] == 0]
            if unvisited:
                return max(unvisited, key=lambda a: (self.priors[a], -a))
        parent_q = 0.0
        for a in range(len(self.visits)):
            parent_q += self.value_sums[a, self.player]
        parent_q = parent_q / total if total else 0.0
        for a in range(len(self.visits)):
            if not self.legal[a]:
                continue
            n = int(self.visits[a])
            if config.selection == "ucb1":
                score = self.value_sums[a, self.player] / n + config.c_uct * math.sqrt(math.log(total) / n)
            else:
                q = self.value_sums[a, self.player] / n if n else parent_q
                score = q + config.c_puct * float(self.priors[a]) * math.sqrt(max(total, 1)) / (1 + n)
            if score > best_score:
                best, best_score = a, score
        return best


def reference_search(game, evaluator, state, simulations: int, config: SearchConfig) -> np.ndarray:
    """Root visit counts after `simulations` simulations from `state` (no noise, no reuse)."""

    def evaluate(node: Node) -> np.ndarray:
        logits, values = evaluator.evaluate([node.state])
        node.priors = masked_softmax(np.asarray(logits, dtype=np.float32), node.legal[None])[0]
        return to_absolute(np.asarray(values)[:1], np.array([node.player]))[0]

    root = Node(game, state)
    evaluate(root)
    for _ in range(simulations):
        node, path = root, []
        while True:
            action = node.choose(config)
            path.append((node, action))
            if action not in node.children:
                child = Node(game, game.step(node.state, action)[0])
                node.children[action] = child
                value = child.value if child.terminal else evaluate(child)
                break
            node = node.children[action]
            if node.terminal:
                value = node.value
                break
        for parent, action in path:
            parent.visits[action] += 1
            parent.value_sums[action] += value
    return root.visits
