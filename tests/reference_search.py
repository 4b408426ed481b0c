"""A deliberately simple search, one Python object per node and one evaluator call per leaf, that
the fast batched engine must reproduce visit for visit (same formulas, same arithmetic order), chance
nodes included: a move with a random result holds its outcomes by chance key, at most
`max_chance_children`, a new one evicting the least visited (or, with fixed outcomes, passing to the
least visited kept one), and every pass draws a fresh outcome."""

from __future__ import annotations

import math
from functools import partial

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
        if config.fpu_reduction > 0:  # Lc0's first-play urgency: less for a new child the more prior is explored
            explored = sum(float(self.priors[a]) for a in range(len(self.visits)) if self.legal[a] and self.visits[a])
            parent_q -= config.fpu_reduction * math.sqrt(explored)
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


class Chance:
    """The outcomes of one chance move seen so far: key -> [node, times drawn]."""

    def __init__(self):
        self.outcomes: dict = {}

    def outcome(self, key, make, limit: int, fixed: bool) -> tuple[Node, bool]:
        """The outcome node of `key`, made (and an outcome evicted) if it is new, or with `fixed`
        outcomes and no room the least visited kept one; whether it was made."""
        entry, new = self.outcomes.get(key), key not in self.outcomes
        if new and len(self.outcomes) >= limit:
            least = min(self.outcomes, key=lambda k: self.outcomes[k][1])
            if fixed:
                entry, new = self.outcomes[least], False
            else:
                del self.outcomes[least]
        if new:
            entry = self.outcomes[key] = [make(), 0]
        entry[1] += 1
        return entry[0], new


def reference_search(
    game,
    evaluator,
    state,
    simulations: int,
    config: SearchConfig,
    rng=None,
    max_chance_children: int = 8,
    fixed_outcomes: bool = False,
) -> np.ndarray:
    """Root visit counts after `simulations` simulations from `state` (no noise, no reuse); `rng` draws
    the chance outcomes."""

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
            child = node.children.get(action)
            if child is None or isinstance(child, Chance):
                after, key = game.step(node.state, action, rng)
                if key is None:
                    child, new = Node(game, after), True
                    node.children[action] = child
                else:
                    chance = node.children.setdefault(action, Chance())
                    child, new = chance.outcome(key, partial(Node, game, after), max_chance_children, fixed_outcomes)
                if new:
                    value = child.value if child.terminal else evaluate(child)
                    break
            node = child
            if node.terminal:
                value = node.value
                break
        for parent, action in path:
            parent.visits[action] += 1
            parent.value_sums[action] += value
    return root.visits
