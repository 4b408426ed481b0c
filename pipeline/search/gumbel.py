"""Gumbel AlphaZero's root: "Policy improvement by planning with Gumbel" (Danihelka et al., ICLR 2022).

At the root of each tree, m = min(`gumbel_considered`, legal moves) actions are drawn without
replacement by Gumbel-top-k (the top m of g(a) + logits(a), with g(a) ~ Gumbel(0, 1) from the tree's
own generator); sequential halving then spends the simulation budget on them in phases, each phase
giving every remaining action the same number of simulations and keeping the better half by
g + logits + sigma(q) for the next. The move is the argmax of g + logits + sigma(q) over the last
phase's actions, and the policy target is softmax(logits + sigma(completed Q)) over the legal moves.

sigma(q) = (c_visit + max_b N(b)) * c_scale * q, with q the root player's Q rescaled to [0, 1] by
min-max over the legal moves' completed Q: the mean backed-up value where a move was visited, else
the mixed value v_mix (the evaluator's value at the root blended with the prior-weighted Q of the
visited moves, the paper's appendix D). Every player reads its own entry of the value vector (max^n),
so games with more than two players need nothing special.

This is the paper's Gumbel AlphaZero variant: below the root our PUCT selection runs unchanged. The
deterministic non-root rule of Gumbel MuZero is not needed for the policy-improvement guarantee,
which comes from the root alone.

Without noise (evaluation, play, analysis) g = 0, so the choice is deterministic: the top m by prior,
then the best by prior and searched value. Dirichlet noise and the visit-count temperature are not
used here: the Gumbel noise is the exploration.

Tree reuse: the phases count the simulations of this search only (the schedule is fixed by the
budget), while Q, v_mix and max N read the whole root, reused visits included, since they are all
honest value estimates of the same position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pipeline.search.forest import Forest
from pipeline.search.mcts import BatchedSearch
from pipeline.search.tree_kernels import SKIP

_TINY = np.finfo(np.float32).tiny  # a prior the float32 softmax rounded to 0 still gets a finite logit


def halving_phases(considered: int, simulations: int) -> list[tuple[int, int]]:
    """Sequential halving's phases as (actions, simulations of the phase), spending exactly `simulations`.

    Phase k gives each of its actions max(1, floor(n / (ceil(log2 m) * actions))) simulations; the
    actions halve each phase down to two, which take whatever budget is left; the last phase may be
    cut short (the schedule of the paper, as mctx lays it out)."""
    if considered <= 1:
        return [(1, simulations)] if simulations > 0 else []
    rounds = math.ceil(math.log2(considered))
    phases, spent, actions = [], 0, considered
    while spent < simulations:
        steps = min(max(1, simulations // (rounds * actions)) * actions, simulations - spent)
        phases.append((actions, steps))
        spent += steps
        actions = max(2, actions // 2)
    return phases


def transformed_q(forest: Forest, root: int, c_visit: float, c_scale: float) -> np.ndarray:
    """sigma(completed Q) of every action at `root` for the root's player; 0 on illegal moves."""
    player = forest.players[root]
    legal = forest.legal[root]
    visits = forest.visits[root].astype(np.float64)
    visited = visits > 0
    q = forest.value_sums[root, :, player] / np.maximum(visits, 1)
    total = visits.sum()
    mixed = forest.raw_values[root, player]
    if total > 0:
        weights = np.maximum(forest.priors[root].astype(np.float64), _TINY)[visited]
        mixed = (mixed + total * np.dot(weights, q[visited]) / weights.sum()) / (total + 1)
    completed = np.where(visited, q, mixed)
    low, high = completed[legal].min(), completed[legal].max()
    scaled = (completed - low) / max(high - low, 1e-8)
    return np.where(legal, (c_visit + visits.max()) * c_scale * scaled, 0.0)


@dataclass
class GumbelChoice:
    action: int
    policy: np.ndarray  # softmax(logits + sigma(completed Q)) over all actions, 0 on illegal ones


class _Halving:
    """One tree's root: its considered actions and where it stands in its sequential halving."""

    def __init__(self, forest: Forest, slot: int, budget: int, noise: bool, search: GumbelSearch):
        self.forest, self.search, self.budget = forest, search, budget
        self.root = int(forest.roots[slot])
        legal = forest.legal[self.root]
        priors = np.maximum(forest.priors[self.root].astype(np.float64), _TINY)
        self.logits = np.where(legal, np.log(priors), -np.inf)
        actions = len(legal)
        self.gumbel = forest.rngs[slot].gumbel(size=actions) if noise else np.zeros(actions)
        m = min(search.considered, int(legal.sum()))
        self.remaining = self._best(np.flatnonzero(legal), m, self.gumbel + self.logits)
        self.phases = halving_phases(m, budget)
        self.phase, self.phase_start = -1, 0

    @staticmethod
    def _best(actions: np.ndarray, count: int, score: np.ndarray) -> np.ndarray:
        """The `count` best of `actions` by `score`, best first (ties to the lower action)."""
        order = np.argsort(-score[actions], kind="stable")
        return actions[order[:count]]

    def score(self) -> np.ndarray:
        config = self.search.search.config
        sigma = transformed_q(self.forest, self.root, config.gumbel_c_visit, config.gumbel_c_scale)
        return self.gumbel + self.logits + sigma

    def action(self, step: int) -> int:
        """The root action of simulation `step` of this search; SKIP once the budget is spent."""
        if step >= self.budget:
            return SKIP
        next_start = self.phase_start + (self.phases[self.phase][1] if self.phase >= 0 else 0)
        if step == next_start:  # a new phase: keep the best of the remaining actions
            self.phase += 1
            self.phase_start = step
            self.remaining = self._best(self.remaining, self.phases[self.phase][0], self.score())
        return int(self.remaining[(step - self.phase_start) % len(self.remaining)])

    def choice(self) -> GumbelChoice:
        config = self.search.search.config
        sigma = transformed_q(self.forest, self.root, config.gumbel_c_visit, config.gumbel_c_scale)
        action = int(self._best(self.remaining, 1, self.gumbel + self.logits + sigma)[0])
        improved = self.logits + sigma
        improved = np.exp(improved - improved.max())  # exp(-inf) = 0 on illegal moves
        return GumbelChoice(action, (improved / improved.sum()).astype(np.float32))


class GumbelSearch:
    """Runs Gumbel root searches on many trees at once through one `BatchedSearch`: every tree's
    sequential halving picks its root action for each simulation, PUCT goes on below."""

    def __init__(self, search: BatchedSearch):
        self.search = search
        self.considered = search.config.gumbel_considered

    def run(self, forest: Forest, slots: list[int], budgets: list[int], noise: list[bool]) -> list[GumbelChoice]:
        """Search each slot's tree with its own budget (Gumbel noise where `noise`); the move and
        policy target of each. The trees share every evaluator call; a spent tree sits out."""
        self.search.prepare_roots(forest, slots, [False] * len(slots))  # no Dirichlet noise
        trees = [_Halving(forest, slot, budget, noisy, self) for slot, budget, noisy in zip(slots, budgets, noise)]
        steps = max(budgets, default=0)
        if steps > 0:
            self.search.simulate(forest, slots, steps, lambda step: [tree.action(step) for tree in trees])
        return [tree.choice() for tree in trees]
