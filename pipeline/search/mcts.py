"""Batched tree search over many games at once: one leaf per tree per step, one evaluator call.

Selection is PUCT (AlphaZero) or UCB1 (classic UCT); each node's player maximises its own entry of
the backed-up value vector (max^n, Petosa & Balch section 3), so two-player games need no special path.
A root driver may name each tree's root action per simulation instead (Gumbel AlphaZero's
sequential halving, `gumbel.py`); PUCT then still selects below the root.
The walk down and the backup run compiled over all trees (`tree_kernels.py`); Python only steps the game
for each new leaf or chance outcome and batches the evaluator call.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Literal

import numpy as np
from pydantic import Field

from pipeline.config import Device, EvaluateParams, Float, SearchSettings, ValueParams
from pipeline.games.base import StepsLegalMoves, offers, to_absolute
from pipeline.games.contract import GameFault
from pipeline.games.values import terminal_value
from pipeline.plumbing.clip import quoted
from pipeline.search.evaluator import Evaluator
from pipeline.search.forest import Forest
from pipeline.search.playouts import check_playouts, mix_playouts
from pipeline.search.tree_kernels import CHANCE, EXPANDED, TERMINAL, backup, select_leaves

SKIP = -2  # a root action that sits a simulation out (its tree's budget is spent)


class SearchConfig(SearchSettings):
    """One player's search: the schema's `search` settings themselves (one type, one set of defaults and
    bounds), the run's value scheme, and what only players without a network set. The budget is not
    here: a player's is its PlayConfig's (gating and `match` play at other budgets than the run's)."""

    value: ValueParams = ValueParams()  # what a finished game is worth (pipeline/games/values.py)
    selection: Literal["puct", "ucb1"] = "puct"  # ucb1: classic UCT, rollouts at the leaves
    c_uct: Float = Field(EvaluateParams().c_uct, gt=0)
    # where the network runs: the params' top-level `device`, travelling with each player's search into
    # worker processes and Ray tasks; out of match caches' keys, as the runtime is
    device: Device = Field("auto", repr=False)
    gumbel_c_visit: Float = Field(50.0, gt=0)  # sigma(q) = (c_visit + max_b N(b)) * c_scale * q, the paper's

    def end_value(self, game) -> Callable[[Any], np.ndarray]:
        """A finished game's value vector under this config's scheme: the one place it is built."""
        return partial(terminal_value, game, scheme=self.value.scheme, zero_sum=self.value.zero_sum)


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    masked = np.where(legal, logits, -np.inf)
    masked = masked - masked.max(axis=-1, keepdims=True)
    exp = np.exp(masked)
    return (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)


class BatchedSearch:
    def __init__(self, game, evaluator: Evaluator, config: SearchConfig):
        check_playouts(game, config.greedy_playout_weight)
        self.game = game
        self.evaluator = evaluator
        self.config = config
        # the walk takes actions of the legal masks the forest holds: no legality check a step
        self._step = game.step_legal if offers(game, StepsLegalMoves) else game.step

    def _evaluate(self, forest: Forest, nodes: list[int]) -> np.ndarray:
        """Expand `nodes` with one evaluator call; return their values in absolute seats, with greedy
        playouts' outcomes mixed in where the config asks (`playouts.py`)."""
        if not nodes:
            return np.zeros((0, self.game.num_players))
        index = np.asarray(nodes)
        logits, values = self.evaluator.evaluate([forest.states[n] for n in nodes])
        forest.priors[index] = masked_softmax(np.asarray(logits, dtype=np.float32), forest.legal[index])
        forest.status[index] = EXPANDED
        if not np.isfinite(values).all():  # else every PUCT score is nan and no child is ever chosen
            raise GameFault(
                f"game {quoted(self.game.name)}: the network's value of a position is not finite: an observation"
                " (encode) holds nan or inf, or the network's weights diverged"
            )
        absolute = to_absolute(np.asarray(values), forest.players[index])
        if self.config.greedy_playout_weight > 0:
            absolute = mix_playouts(forest, nodes, absolute, self.config)
        forest.raw_values[index] = absolute
        return absolute

    def prepare_roots(self, forest: Forest, slots: list[int], noise: list[bool]) -> None:
        """Expand unexpanded roots (one batch) and set each root's priors, with Dirichlet noise where asked."""
        roots = forest.roots[slots]
        self._evaluate(forest, [int(r) for r in roots if not forest.expanded(r)])
        eps, alpha = self.config.dirichlet_epsilon, self.config.dirichlet_alpha
        for slot, root, noisy in zip(slots, roots, noise):
            priors = forest.priors[root].copy()
            if noisy:
                legal = np.flatnonzero(forest.legal[root])
                priors[legal] = (1 - eps) * priors[legal] + eps * forest.rngs[slot].dirichlet([alpha] * len(legal))
            forest.root_priors[slot] = priors

    def simulate(
        self,
        forest: Forest,
        slots: list[int],
        simulations: int,
        root_actions: Callable[[int], np.ndarray] | None = None,
    ) -> None:
        """Run `simulations` simulations in each slot's tree; `prepare_roots` must have run.

        A tree whose walk reaches a chance node pauses while Python draws the outcome, then resumes
        from it in the next compiled call; the other trees wait with their leaf already found.
        `root_actions(i)`, if given, names each tree's root action for step i: -1 lets PUCT choose,
        SKIP leaves the tree out of that step (a root driver such as Gumbel's).
        With `search.parallel_leaves` k > 1, each step sends k walkers down every tree under a virtual
        loss (`tree_kernels.py`), so one evaluator call takes k leaves a tree: a single tree (a timed move)
        feeds the network in batches, at some cost in what each simulation knows.
        """
        walkers = self.config.parallel_leaves
        rows = np.repeat(np.asarray(slots), walkers)  # row r: walker r % k of tree r // k
        n = len(rows)
        depth = max(int(forest.used[rows].max()) + 2 * simulations, 2)
        path_nodes = np.zeros((n, depth), dtype=np.int64)
        path_actions = np.zeros((n, depth), dtype=np.int64)
        path_lengths = np.zeros(n, dtype=np.int64)
        parents, actions, leaves = (np.zeros(n, dtype=np.int64) for _ in range(3))
        values = np.zeros((n, self.game.num_players))
        roots, root_priors = forest.roots[rows], forest.root_priors[rows]
        ucb1, virtual_loss = self.config.selection == "ucb1", walkers > 1
        forced = np.full(n, -1, dtype=np.int64)
        walker_index = np.tile(np.arange(walkers), len(slots))
        for step in range(-(-simulations // walkers)):
            if root_actions is not None:
                forced[:] = np.repeat(root_actions(step), walkers)
            starts = roots.copy()
            active = (forced != SKIP) & (walker_index < simulations - step * walkers)
            path_lengths[:] = 0
            pending, pending_rows = [], []
            while active.any():
                select_leaves(
                    starts, active, forced, root_priors, forest.visits, forest.value_sums, forest.priors,
                    forest.children, forest.legal, forest.players, forest.status, self.config.c_puct,
                    self.config.c_uct, ucb1, self.config.fpu_reduction, virtual_loss,
                    path_nodes, path_actions, path_lengths, parents, actions, leaves,
                )  # fmt: skip
                live = np.flatnonzero(active)  # as Python ints at once: numpy's scalars cost a call each
                walks = (live, rows[live], parents[live], actions[live], leaves[live])
                for i, row, parent, action, leaf in zip(*(column.tolist() for column in walks)):
                    if leaf < 0:
                        leaf = self._reach(forest, row, parent, action)
                    status = forest.status[leaf]
                    if status == EXPANDED:  # a chance outcome searched before: walk on
                        starts[i] = leaf
                        continue
                    active[i] = False
                    if status == TERMINAL:
                        values[i] = forest.terminal_values[leaf]
                    else:
                        pending.append(leaf)
                        pending_rows.append(i)
            if pending:  # walkers of one tree may stop at the same new leaf: it is judged once
                position = {leaf: i for i, leaf in enumerate(dict.fromkeys(pending))}
                judged = self._evaluate(forest, list(position))
                values[pending_rows] = judged[[position[leaf] for leaf in pending]]
            backup(
                path_nodes, path_actions, path_lengths, values, forest.visits, forest.value_sums, forest.players,
                virtual_loss,
            )  # fmt: skip

    def _reach(self, forest: Forest, slot: int, parent: int, action: int) -> int:
        """The node a walk that stopped at a missing child or a chance node reaches, creating it (and
        drawing a chance outcome) where needed; an edge another walker of the tree created in this step
        is followed, not created again."""
        child = int(forest.children[parent, action])
        if child >= 0 and forest.status[child] != CHANCE:
            return child
        state, key = self._step(forest.states[parent], action, forest.rngs[slot])
        if key is None:  # a deterministic move seen for the first time
            child = forest.add_node(slot, state)
            forest.children[parent, action] = child
            return child
        if child < 0:
            forest.children[parent, action] = child = forest.add_chance_node(slot)
        return forest.outcome(slot, child, key, state)

    def run(self, forest: Forest, slots: list[int], simulations: int, add_noise: bool = False) -> None:
        """Prepare the roots and add `simulations` simulations to every tree."""
        self.prepare_roots(forest, slots, [add_noise] * len(slots))
        self.simulate(forest, slots, simulations)
