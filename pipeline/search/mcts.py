"""Batched tree search over many games at once: one leaf per tree per step, one evaluator call.

Selection is PUCT (AlphaZero) or UCB1 (classic UCT); each node's player maximises its own entry of
the backed-up value vector (max^n, Petosa & Balch section 3), so two-player games need no special path.
A root driver may name each tree's root action per simulation instead (Gumbel AlphaZero's
sequential halving, `gumbel.py`); PUCT then still selects below the root.
The walk down and the backup run compiled over all trees (`tree_kernels.py`). For a game with compiled
rules (`pipeline/games/compiled.py`) and an evaluator that takes encoded positions, creating, judging
and encoding the new leaves runs compiled too (the game's functions between `reach_leaves` and
`settle_leaves`; a chance move's result drawn compiled from the trees' generators lent as streams where
the game offers `draw_keys`, else in Python), and Python calls the evaluator once a step; otherwise
Python steps the game for each new leaf or chance outcome (the plain search, which the compiled one
matches move for move: tests/test_compiled_search.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Literal

import numpy as np
from pydantic import Field

from pipeline.config import Device, EvaluateParams, Float, SearchSettings, ValueParams
from pipeline.games import pcg64
from pipeline.games.base import CompilesRules, StepsLegalMoves, offers
from pipeline.games.contract import GameFault
from pipeline.games.values import terminal_value
from pipeline.plumbing.clip import quoted
from pipeline.search.evaluator import Encoder, Evaluator, judges_planes, reads_constant_vector
from pipeline.search.forest import Forest
from pipeline.search.playouts import check_playouts, mix_playouts
from pipeline.search.tree_kernels import (
    CHANCE,
    EXPANDED,
    FINISHED,
    TERMINAL,
    backup,
    expand_nodes,
    reach_leaves,
    select_leaves,
    settle_leaves,
    softmax_legal,
    start_walks,
    take_outcomes,
    walk_on,
)  # fmt: skip


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


class _Walks:
    """One simulation step's walks, a row each (walker r % k of tree r // k): where each starts and is, its
    path, its leaf and the value backed up; for the compiled expansion, the leaves to judge and their planes."""

    def __init__(self, n: int, depth: int, players: int, root_priors: np.ndarray, walkers: int, key_width: int):
        self.root_priors = root_priors  # each row's root's priors, noise mixed in
        self.trees = np.arange(n) // walkers  # each row's tree, as the search's `slots` list them
        self.starts = np.zeros(n, dtype=np.int64)
        self.active = np.zeros(n, dtype=np.bool_)
        self.path_nodes = np.zeros((n, depth), dtype=np.int64)
        self.path_actions = np.zeros((n, depth), dtype=np.int64)
        self.path_lengths = np.zeros(n, dtype=np.int64)
        self.parents, self.actions, self.leaves = (np.zeros(n, dtype=np.int64) for _ in range(3))
        self.values = np.zeros((n, players))
        self.pending, self.walk_pending, self.new_ends = (np.zeros(n, dtype=np.int64) for _ in range(3))
        self.new_nodes, self.new_parents, self.new_actions, self.movers = (
            np.zeros(n, dtype=np.int64) for _ in range(4)
        )
        self.chance_moves = np.zeros(n, dtype=np.bool_)  # whether each walk's last move has a random result
        self.waiting = np.zeros(n, dtype=np.int64)  # the walks that wait for a chance outcome
        self.draws = np.zeros((n, key_width), dtype=np.int64)  # the key each waiting walk drew
        self.keys = np.zeros((n, key_width), dtype=np.int64)  # the new outcomes' keys, for the game's `outcome`
        self.streams: np.ndarray | None = None  # the trees' generators lent to compiled draws (`pcg64.py`)
        self.stream_of_slot: np.ndarray | None = None  # each forest slot's row of `streams` (-1: none lent)
        self._planes: np.ndarray | None = None

    def planes(self, shape: tuple[int, ...]) -> np.ndarray:
        """The network's input for this step's leaves, one buffer for every step."""
        if self._planes is None:
            self._planes = np.zeros((len(self.starts), *shape), dtype=np.float32)
        return self._planes


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Priors from logits: row by row, the softmax over the legal moves (`tree_kernels.py`'s `softmax_legal`,
    whose arithmetic search's expansion shares)."""
    logits = np.ascontiguousarray(logits, dtype=np.float32)
    priors = np.empty_like(logits)
    softmax_legal(logits, np.ascontiguousarray(legal), priors)
    return priors


class BatchedSearch:
    def __init__(self, game, evaluator: Evaluator, config: SearchConfig, compiled: bool = True):
        """`compiled` False keeps to the plain search where the compiled expansion could run (its yardstick)."""
        check_playouts(game, config.greedy_playout_weight)
        self.game = game
        self.evaluator = evaluator
        self.config = config
        # the walk takes actions of the legal masks the forest holds: no legality check a step
        self._step = game.step_legal if offers(game, StepsLegalMoves) else game.step
        compiles = compiled and offers(game, CompilesRules) and judges_planes(evaluator)
        # the rules a forest of this search is expanded with: give them to its Forest (greedy playouts
        # keep the plain search unless the rules play them out from rows)
        rules = game.compiled_rules() if compiles else None
        playouts = rules is not None and rules.playouts is not None
        self.rules = rules if config.greedy_playout_weight == 0 or playouts else None
        # the evaluator reads the game's constant planes at one cell: encode no more of them
        self._vectors = rules is not None and rules.encode_vectors is not None and reads_constant_vector(evaluator)

    def new_forest(self, capacity: int, slots: int) -> Forest:
        """A forest for this search's trees: the config's value scheme and chance outcomes, and the
        game's compiled rules where this search expands compiled."""
        config = self.config
        return Forest(
            self.game, capacity, slots, config.end_value(self.game), config.max_chance_children,
            config.chance_outcomes, self.rules,
        )  # fmt: skip

    def _compiled(self, forest: Forest) -> bool:
        return self.rules is not None and forest.rules is not None

    def _evaluate(self, forest: Forest, nodes: list[int]) -> np.ndarray:
        """Expand `nodes` with one evaluator call; return their values in absolute seats, with greedy
        playouts' outcomes mixed in where the config asks (`playouts.py`)."""
        if not nodes:
            return np.zeros((0, self.game.num_players))
        states = [forest.state(n) for n in nodes]
        if self._compiled(forest):  # by their rows, as the compiled expansion's leaves are cached

            def encode(at: list[int] | None) -> np.ndarray:
                return self.game.encode_batch(states if at is None else [states[i] for i in at])

            return self._judge_rows(forest, nodes, encode)
        return self._expand(forest, nodes, *self.evaluator.evaluate(states))

    def _judge_rows(self, forest: Forest, nodes: list[int], encode: Encoder, walks: _Walks | None = None) -> np.ndarray:
        """`_evaluate` of nodes each named by its row for the position cache, encoded when the evaluator asks;
        `walks` the step's, whose lent streams the playouts draw from."""
        keys = [forest.rows[node].tobytes() for node in nodes]
        return self._expand(forest, nodes, *self.evaluator.evaluate_encoded(keys, encode), walks)

    def _expand(
        self, forest: Forest, nodes: list[int], logits: np.ndarray, values: np.ndarray, walks: _Walks | None = None
    ) -> np.ndarray:
        """Give `nodes` the evaluator's priors; return its values in absolute seats (`_evaluate`)."""
        index = np.asarray(nodes, dtype=np.int64)
        finite = expand_nodes(
            index, np.ascontiguousarray(logits, dtype=np.float32), np.asarray(values), forest.legal, forest.priors,
            forest.status, forest.players, forest.raw_values, forest.moves, forest.move_counts,
        )  # fmt: skip
        if not finite:  # else every PUCT score is nan and no child is ever chosen
            raise GameFault(
                f"game {quoted(self.game.name)}: the network's value of a position is not finite: an observation"
                " (encode) holds nan or inf, or the network's weights diverged"
            )
        absolute = forest.raw_values[index]
        if self.config.greedy_playout_weight > 0:
            lent = None if walks is None or walks.streams is None else (walks.streams, walks.stream_of_slot)
            absolute = forest.raw_values[index] = mix_playouts(forest, nodes, absolute, self.config, lent)
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

        A tree whose walk reaches a chance node pauses while its outcome is drawn, then resumes from it in
        the next compiled call; the other trees wait with their leaf already found.
        `root_actions(i)`, if given, names each tree's root action for step i: -1 lets PUCT choose,
        SKIP leaves the tree out of that step (a root driver such as Gumbel's).
        With `search.parallel_leaves` k > 1, each step sends k walkers down every tree under a virtual
        loss (`tree_kernels.py`), so one evaluator call takes k leaves a tree: a single tree (a timed move)
        feeds the network in batches, at some cost in what each simulation knows.
        """
        walkers = self.config.parallel_leaves
        rows = np.repeat(np.asarray(slots), walkers)  # row r: walker r % k of tree r // k
        depth = max(int(forest.used[rows].max()) + 2 * simulations, 2)
        key_width = self.rules.key_width if self._compiled(forest) else 0
        walks = _Walks(len(rows), depth, self.game.num_players, forest.root_priors[rows], walkers, key_width)
        generators = [forest.rngs[slot] for slot in slots]
        if self._draws_compiled(forest, generators):
            walks.streams = pcg64.streams(generators)
            walks.stream_of_slot = np.full(len(forest.roots), -1, dtype=np.int64)
            walks.stream_of_slot[slots] = np.arange(len(slots))
        try:
            self._steps(forest, rows, simulations, root_actions, walks)
        finally:
            if walks.streams is not None:  # the generators go on from the kernels' last draw
                pcg64.store(walks.streams, generators)

    def _draws_compiled(self, forest: Forest, generators: list) -> bool:
        """Whether this search's chance outcomes are drawn compiled: the game offers `draw_keys`, every tree's
        generator is numpy's default (`pcg64.py` follows it), and greedy playouts, if mixed in, draw from the
        same streams (`playouts_from_streams`), not from the generators in between."""
        rules = self.rules if self._compiled(forest) else None
        return (
            rules is not None and rules.draw_keys is not None
            and (self.config.greedy_playout_weight == 0 or rules.playouts_from_streams is not None)
            and all(pcg64.is_pcg64(generator) for generator in generators)
        )  # fmt: skip

    def _steps(self, forest: Forest, rows: np.ndarray, simulations: int, root_actions, walks: _Walks) -> None:
        """`simulate`'s steps: each walks every row's tree to a leaf, judges the leaves, backs the values up."""
        walkers = self.config.parallel_leaves
        find_leaves = self._find_leaves_compiled if self._compiled(forest) else self._find_leaves
        forced = np.full(len(rows), -1, dtype=np.int64)
        for step in range(-(-simulations // walkers)):
            if root_actions is not None:
                forced[:] = np.repeat(root_actions(step), walkers)
            remaining = simulations - step * walkers
            start_walks(rows, forest.roots, forced, walkers, remaining, walks.starts, walks.active, walks.path_lengths)
            find_leaves(forest, rows, forced, walks)
            backup(
                walks.path_nodes, walks.path_actions, walks.path_lengths, walks.values, forest.visits,
                forest.value_sums, forest.players, walkers > 1,
            )  # fmt: skip

    def _select(self, forest: Forest, forced: np.ndarray, walks: _Walks) -> None:
        """Walk every active row's tree down from its start (`select_leaves`)."""
        config = self.config
        select_leaves(
            walks.starts, walks.active, forced, walks.root_priors, forest.visits, forest.value_sums, forest.priors,
            forest.children, forest.moves, forest.move_counts, forest.players, forest.status, config.c_puct,
            config.c_uct, config.selection == "ucb1", config.fpu_reduction, config.parallel_leaves > 1,
            walks.path_nodes, walks.path_actions, walks.path_lengths, walks.parents, walks.actions, walks.leaves,
        )  # fmt: skip

    def _find_leaves(self, forest: Forest, rows: np.ndarray, forced: np.ndarray, walks: _Walks) -> None:
        """Walk each active row to a leaf and give it its leaf's value, stepping the game in Python for
        each new node and chance outcome."""
        active, values = walks.active, walks.values
        pending, pending_rows = [], []
        while active.any():
            self._select(forest, forced, walks)
            live = np.flatnonzero(active)  # as Python ints at once: numpy's scalars cost a call each
            ends = (live, rows[live], walks.parents[live], walks.actions[live], walks.leaves[live])
            for i, row, parent, action, leaf in zip(*(column.tolist() for column in ends)):
                if leaf < 0:
                    leaf = self._reach(forest, row, parent, action)
                status = forest.status[leaf]
                if status == EXPANDED:  # a chance outcome searched before: walk on
                    walks.starts[i] = leaf
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

    def _find_leaves_compiled(self, forest: Forest, rows: np.ndarray, forced: np.ndarray, walks: _Walks) -> None:
        """`_find_leaves` with the game's compiled rules: a few compiled calls create, settle and encode
        every new leaf of the batch; Python draws chance outcomes, values the new finished games and calls
        the evaluator once."""
        rules, active, values = self.rules, walks.active, walks.values
        walks.walk_pending[:] = FINISHED
        judged, going = 0, active.any()
        while going:
            self._select(forest, forced, walks)
            created = self._new_nodes(forest, rows, walks)
            judged, ended, stuck = settle_leaves(
                walks.new_nodes, walks.movers, created, forest.status, forest.players, forest.legal, forest.children,
                active, walks.leaves, walks.pending, judged, walks.walk_pending, walks.new_ends,
            )  # fmt: skip
            if stuck >= 0:
                raise GameFault(
                    f"game {quoted(self.game.name)}: legal_mask: no legal move in a state that is not terminal"
                )
            for node in walks.new_ends[:ended].tolist():
                forest.judge_end(node)
            going = walk_on(active, walks.walk_pending, walks.leaves, forest.terminal_values, values, walks.starts)
        if judged:

            def encode(at: list[int] | None) -> np.ndarray:
                nodes, count = (walks.pending, judged) if at is None else (walks.pending[at], len(at))
                planes = walks.planes(self.game.observation_shape)
                kernel = rules.encode_vectors if self._vectors else rules.encode
                kernel(rules.shape, forest.rows, nodes, count, planes)
                return planes[:count]

            answer = self._judge_rows(forest, walks.pending[:judged].tolist(), encode, walks)
            waiting = walks.walk_pending >= 0
            values[waiting] = answer[walks.walk_pending[waiting]]

    def _new_nodes(self, forest: Forest, rows: np.ndarray, walks: _Walks) -> int:
        """Create the nodes the walks stopped before (a missing child, a chance outcome not kept yet) and
        fill their rows, movers and legal masks with the game's compiled rules; returns how many, listed
        in `walks.new_nodes`."""
        rules = self.rules
        if rules.chance is not None:
            rules.chance(rules.shape, forest.rows, walks.parents, walks.actions, len(rows), walks.chance_moves)
        created, waits = reach_leaves(
            walks.active, rows, walks.parents, walks.actions, walks.leaves, walks.chance_moves, forest.capacity,
            forest.used, forest.children, walks.new_nodes, walks.new_parents, walks.new_actions, walks.waiting,
        )  # fmt: skip
        drawn = self._draw_outcomes(forest, rows, walks, created, waits) if waits else 0
        if created:
            rules.step(rules.shape, forest.rows, walks.new_parents, walks.new_actions, walks.new_nodes, created)
        if drawn:
            rules.outcome(
                rules.shape, forest.rows, walks.new_parents[created:], walks.new_actions[created:], walks.keys,
                walks.new_nodes[created:], drawn,
            )  # fmt: skip
        created += drawn
        if created:
            rules.mover(rules.shape, forest.rows, walks.new_nodes, created, walks.movers)
            rules.legal(rules.shape, forest.rows, walks.new_nodes, created, forest.legal)
        return created

    def _draw_outcomes(self, forest: Forest, rows: np.ndarray, walks: _Walks, created: int, waits: int) -> int:
        """Draw the outcome of the chance move each of the `waits` waiting walks stopped at, from its tree's
        generator in walk order as the plain search does (`_reach`): compiled from the lent streams, else
        by the rules' `draw` in Python. `take_outcomes` finds or makes each outcome's node and lists the new
        ones after the `created` new nodes, their keys in `walks.keys`; returns how many are new."""
        rules, waiting = self.rules, walks.waiting
        if walks.streams is not None:
            parents, trees = walks.parents[waiting[:waits]], walks.trees[waiting[:waits]]
            rules.draw_keys(rules.shape, forest.rows, parents, walks.streams, trees, waits, walks.draws)
        else:
            for k, i in enumerate(waiting[:waits].tolist()):
                walks.draws[k] = rules.draw(forest.rows[walks.parents[i]], forest.rngs[rows[i]])
        return take_outcomes(
            waiting, waits, rows, walks.parents, walks.actions, walks.draws, forest.capacity, forest.used,
            forest.children, forest.status, forest.outcome_counts, forest.outcome_nodes, forest.outcome_visits,
            forest.outcome_keys, forest.fixed_outcomes, walks.leaves, walks.new_nodes, walks.new_parents,
            walks.new_actions, walks.keys, created,
        )  # fmt: skip

    def _reach(self, forest: Forest, slot: int, parent: int, action: int) -> int:
        """The node a walk that stopped at a missing child or a chance node reaches, creating it (and
        drawing a chance outcome) where needed; an edge another walker of the tree created in this step
        is followed, not created again."""
        child = int(forest.children[parent, action])
        if child >= 0 and forest.status[child] != CHANCE:
            return child
        state, key = self._step(forest.state(parent), action, forest.rngs[slot])
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
