"""Many search trees in one flat node pool: one slot of `capacity` nodes per tree.

Edge statistics live on the parent (visits[node, a], value_sums[node, a, seat]) in absolute seats,
so backup is a plain add along the path and every node's player reads its own entry (max^n). Game
states stay Python objects in `states`; everything search touches per simulation is an array. With a
game's compiled rules (`pipeline/games/compiled.py`) every node's state is also a row of `rows`, which
search's compiled expansion reads and writes; a node it created gets its Python state only when asked
(`state`).

A move with a random result (the Kingdomino notes) leads to a CHANCE node whose children are the outcomes seen so
far, keyed by the game's chance key, at most `max_chance_children` of them: a new key evicts the
least visited. Each simulation draws a fresh outcome from the game, so edge values converge to the
chance-weighted mean without the game having to expose probabilities. Where outcomes are so many that
none repeats (a Kingdomino row: millions), eviction keeps no subtree below the draw; `"fixed"` keeps
the first outcomes drawn instead and sends every later pass to the least visited of them, an
expectation over a small sample of draws that search can look past.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline.games.compiled import CompiledRules
from pipeline.games.contract import GameFault
from pipeline.plumbing.clip import quoted
from pipeline.search.tree_kernels import CHANCE, EXPANDED, TERMINAL, clear_nodes

# What a node's game state and its Python bookkeeping cost, beyond the arrays: a generous guess (a
# Connect-4 state takes about 0.4 KB, a 4-player Kingdomino one about 3 KB).
STATE_BYTES = 4096


class Forest:
    def __init__(
        self,
        game,
        capacity: int,
        slots: int = 8,
        end_value: Callable[[Any], np.ndarray] | None = None,
        max_chance_children: int = 8,
        chance_outcomes: str = "evict",
        rules: CompiledRules | None = None,
    ):
        """`end_value` turns a finished game into its value vector (default: the game's scores); `rules`,
        the game's compiled rules where search expands this forest compiled (`BatchedSearch.rules`)."""
        self.game = game
        self.rules = rules
        self.capacity = capacity
        self.max_chance_children = max_chance_children
        self.fixed_outcomes = chance_outcomes == "fixed"
        self.end_value = end_value or game.scores
        actions, players = game.num_actions, game.num_players
        nodes = slots * capacity
        self.visits = np.zeros((nodes, actions), dtype=np.int64)
        self.value_sums = np.zeros((nodes, actions, players), dtype=np.float64)
        self.priors = np.zeros((nodes, actions), dtype=np.float32)
        # each node's child per action, -1 where none: cleared as the node is allocated (`_allocate`, the
        # compiled expansion's `settle_leaves`), so that what no tree uses is never written (np.zeros'
        # pages stay untouched until a tree needs them)
        self.children = np.zeros((nodes, actions), dtype=np.int64)
        self.legal = np.zeros((nodes, actions), dtype=np.bool_)
        # an expanded node's legal moves in order, what selection reads (`tree_kernels.py`'s `expand_nodes`)
        self.moves = np.zeros((nodes, actions), dtype=np.int32)
        self.move_counts = np.zeros(nodes, dtype=np.int32)
        self.players = np.zeros(nodes, dtype=np.int64)
        self.status = np.zeros(nodes, dtype=np.int8)
        self.terminal_values = np.zeros((nodes, players), dtype=np.float64)
        self.raw_values = np.zeros((nodes, players), dtype=np.float64)  # evaluator's value at expansion, absolute seats
        self.states: list = [None] * nodes
        self.rows = np.zeros((nodes, rules.width if rules else 0), dtype=np.int64)
        self.outcomes: list = [None] * nodes  # chance node -> {chance key: [child, visits]}
        # with compiled chance rules, a chance node's outcomes in order of arrival: how many, each one's
        # child, visits and key (`tree_kernels.py`'s `take_outcomes`), in place of `outcomes`' dicts
        kept, width = (max_chance_children, rules.key_width) if rules and rules.chance is not None else (0, 0)
        self.outcome_counts = np.zeros(nodes, dtype=np.int64)
        self.outcome_nodes = np.zeros((nodes, kept), dtype=np.int64)
        self.outcome_visits = np.zeros((nodes, kept), dtype=np.int64)
        self.outcome_keys = np.zeros((nodes, kept, width), dtype=np.int64)
        self.roots = np.zeros(slots, dtype=np.int64)
        self.used = np.zeros(slots, dtype=np.int64)
        self.root_priors = np.zeros((slots, actions), dtype=np.float32)  # priors at the root, noise mixed in
        self.rngs: list = [None] * slots
        self._free = list(range(slots - 1, -1, -1))

    @staticmethod
    def node_bytes(game) -> int:
        """Bytes a node holds in the arrays above (a row per action of visits, value sums, priors,
        children, legality and legal moves, and its own values), plus `STATE_BYTES` for its state: what a
        tree of a given size costs."""
        actions, players = game.num_actions, game.num_players
        return actions * (8 + 8 * players + 4 + 8 + 1 + 4) + 4 + 8 + 1 + 16 * players + 2 * 8 + STATE_BYTES

    # --- slots -------------------------------------------------------------------------------
    def _grow(self) -> None:
        """Double the slots, copying only the nodes each tree uses: the arrays come from `np.zeros`, whose
        pages the system hands out untouched until a tree writes them (concatenating the arrays wrote
        every byte of the doubled forest: a second and more of a 32-game Kingdomino batch's self-play).
        A node past its tree's `used` holds nothing: `reset` clears the statistics a tree used, `_allocate` a
        new node's children."""
        old, capacity = len(self.roots), self.capacity
        names = ("visits", "value_sums", "priors", "children", "legal", "moves", "move_counts", "players", "status")
        outcome_tables = ("outcome_counts", "outcome_nodes", "outcome_visits", "outcome_keys")
        for name in (*names, "terminal_values", "raw_values", "rows", *outcome_tables):
            array = getattr(self, name)
            grown = np.zeros((2 * len(array), *array.shape[1:]), dtype=array.dtype)
            for start, used in zip(range(0, old * capacity, capacity), self.used.tolist()):
                grown[start : start + used] = array[start : start + used]
            setattr(self, name, grown)
        for name in ("roots", "used", "root_priors"):
            array = getattr(self, name)
            setattr(self, name, np.concatenate([array, np.zeros_like(array)]))
        self.states += [None] * (old * capacity)
        self.outcomes += [None] * (old * capacity)
        self.rngs += [None] * old
        self._free += list(range(2 * old - 1, old - 1, -1))

    def make_room(self, trees: int) -> None:
        """Grow now, before they are planted, so that `trees` more trees fit."""
        while len(self._free) < trees:
            self._grow()

    def new_tree(self, state, rng: np.random.Generator) -> int:
        if not self._free:
            self._grow()
        slot = self._free.pop()
        self.rngs[slot] = rng
        self.reset(slot, state)
        return slot

    def release(self, slot: int) -> None:
        self.rngs[slot] = None
        self._free.append(slot)

    def reset(self, slot: int, state) -> None:
        """Empty the slot and make `state` its root."""
        start, end = slot * self.capacity, (slot + 1) * self.capacity
        clear_nodes(
            start, start + int(self.used[slot]), self.moves, self.move_counts, self.status, self.visits, self.value_sums
        )
        self.states[start:end] = [None] * self.capacity
        self.outcomes[start:end] = [None] * self.capacity
        self.used[slot] = 0
        self.roots[slot] = self.add_node(slot, state)

    def _allocate(self, slot: int) -> int:
        """The slot's next node, its children cleared."""
        node = slot * self.capacity + int(self.used[slot])
        self.used[slot] += 1
        self.children[node] = -1
        return node

    def add_node(self, slot: int, state) -> int:
        node = self._allocate(slot)
        self.states[node] = state
        if self.rules is not None:
            self.rows[node] = self.rules.to_row(state)
        if self.game.is_terminal(state):
            self.status[node] = TERMINAL
            self.judge_end(node)
        else:
            self.players[node] = self.game.to_play(state)
            self.legal[node] = legal = self.game.legal_mask(state)
            if not legal.any():  # else search walks into no child for ever
                no_move = "legal_mask: no legal move in a state that is not terminal"
                raise GameFault(f"game {quoted(self.game.name)}: {no_move}")
        return node

    def judge_end(self, node: int) -> None:
        """Give the finished game at `node` its value vector."""
        self.terminal_values[node] = value = self.end_value(self.state(node))
        if not np.isfinite(value).all():  # else every PUCT score is nan and no child is ever chosen
            raise GameFault(f"game {quoted(self.game.name)}: scores: expected finite values, got {value.tolist()}")

    def state(self, node: int):
        """The game state at `node`, made from its row where compiled expansion created the node."""
        state = self.states[node]
        if state is None:
            state = self.states[node] = self.rules.from_row(self.rows[node])
        return state

    def add_chance_node(self, slot: int) -> int:
        node = self._allocate(slot)
        self.status[node] = CHANCE
        self.outcomes[node] = {}
        return node

    def outcome(self, slot: int, chance: int, key, state) -> int:
        """The plain search's child of chance node `chance` for outcome `key` (reaching `state`), counted as
        visited once more; a new key beyond `max_chance_children` replaces the least visited outcome, or
        with fixed outcomes is not kept: the pass goes on from the least visited outcome kept. The compiled
        expansion keeps its outcomes in arrays by the same rule (`tree_kernels.py`'s `take_outcomes`)."""
        outcomes = self.outcomes[chance]
        entry = outcomes.get(key)
        if entry is None and len(outcomes) >= self.max_chance_children:
            least = min(outcomes, key=lambda k: outcomes[k][1])
            if self.fixed_outcomes:
                entry = outcomes[least]
            else:
                del outcomes[least]
        if entry is None:
            entry = outcomes[key] = [self.add_node(slot, state), 0]
        entry[1] += 1
        return entry[0]

    def outcome_children(self, chance: int) -> list[int]:
        """The outcomes chance node `chance` keeps, in order of arrival."""
        if self.outcomes[chance] is not None:
            return [child for child, _ in self.outcomes[chance].values()]
        return self.outcome_nodes[chance, : self.outcome_counts[chance]].tolist()

    def room(self, slot: int) -> int:
        return self.capacity - int(self.used[slot])

    # --- the root ------------------------------------------------------------------------------
    def root_state(self, slot: int):
        return self.state(self.roots[slot])

    def root_visits(self, slot: int) -> np.ndarray:
        return self.visits[self.roots[slot]].copy()

    def root_value(self, slot: int) -> np.ndarray:
        """Mean backed-up value vector at the root, absolute seats."""
        root = self.roots[slot]
        return self.value_sums[root].sum(axis=0) / max(int(self.visits[root].sum()), 1)

    def advance(self, slot: int, action: int, state) -> bool:
        """Make the child reached by `action` the root, keeping its searched subtree (tree reuse).

        Sound only if that child holds the state the game actually reached; returns False otherwise.
        """
        child = int(self.children[self.roots[slot], action])
        row = self.rules.to_row(state) if self.rules is not None else None
        if child >= 0 and self.status[child] == CHANCE:
            child = next((c for c in self.outcome_children(child) if self._holds(c, state, row)), -1)
        if child < 0 or not self._holds(child, state, row):
            return False
        self.roots[slot] = child
        self.states[child] = state
        return True

    def _holds(self, node: int, state, row: np.ndarray | None) -> bool:
        """Whether `node` holds `state` (whose row is `row`, where the forest keeps rows): by the rows where
        the node has no state yet, as making one from its row costs more than the state's row."""
        if row is None or self.states[node] is not None:
            return self.state(node) == state
        return np.array_equal(self.rows[node], row)

    def expanded(self, node: int) -> bool:
        return self.status[node] == EXPANDED
