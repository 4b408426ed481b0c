"""Search-based players: AlphaZero (PUCT + network) and classic UCT (UCB1 + random rollouts) are the
same batched search with a different evaluator and selection rule."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from pipeline.search import BatchedSearch, Forest, RolloutEvaluator, SearchConfig
from pipeline.search.evaluator import Evaluator
from pipeline.search.forced import forced_root_actions, pruned_policy
from pipeline.search.gumbel import GumbelSearch


@dataclass(frozen=True)
class PlayConfig:
    simulations: int = 50
    add_noise: bool = False  # root noise (self-play, gating): Dirichlet with PUCT, Gumbel with gumbel
    temperature: float = 1.0
    temperature_moves: int = 0  # plies sampled in proportion to visits^(1/T) (PUCT only)
    temperature_after: float = 0.0  # T of the later plies; 0 = the most visited move
    reuse_tree: bool = True
    # Playout cap randomization (KataGo, Parikh & Wu): a move gets the full budget with this probability,
    # else `fast_simulations` without noise; only full-budget moves yield policy targets.
    full_search_fraction: float = 1.0
    fast_simulations: int = 0
    # A budget of wall time instead (Kingdomino's anchor compares players at equal time a move): when
    # > 0, each move searches this many seconds (k games searched at once: k times as long), stopping
    # early at `simulations`, which then caps the tree. Timed play is not reproducible move for move.
    seconds: float = 0.0


# Simulations between two looks at the clock: few enough to stop near the deadline (at least one
# step of `search.parallel_leaves` walkers).
CLOCK_STEP = 8
# A timed player's tree holds at most this many bytes of nodes (`Forest.node_bytes`): a timed move
# searches until its time is up, its tree is full or it reached its cap, whichever comes first, so a
# high cap (`match --simulations`) costs no more memory than this.
TIMED_TREE_BYTES = 2**28
# Simulations of a worker's warm-up (`SearchAgent.warm_up`): enough to call every kernel of a step.
WARM_UP_SIMULATIONS = 8


class SearchAgent:
    def __init__(
        self, game, evaluator: Evaluator, search: SearchConfig, play: PlayConfig, name: str, compiled: bool = True
    ):
        """`compiled` False: the plain search even where the compiled expansion could run (`BatchedSearch`)."""
        self.game = game
        self.name = name
        self.play = play
        self.search = BatchedSearch(game, evaluator, search, compiled)
        self.gumbel = GumbelSearch(self.search) if search.root == "gumbel" else None
        if self.gumbel is not None and play.seconds > 0:
            raise ValueError(f"{name}: Gumbel search halves a fixed budget; a time a move needs search.root puct")
        # Room for a whole game's worth of reused subtrees before a tree restarts at its root; a timed
        # player's room is its memory's, and half of it is kept free for each move.
        capacity = 8 * play.simulations + 16
        if play.seconds > 0:
            capacity = min(capacity, max(TIMED_TREE_BYTES // Forest.node_bytes(game), 64))
        self.reserve = min(2 * play.simulations, capacity // 2)  # a simulation adds at most two nodes
        # a timed player's big trees: grown one game at a time
        self.forest = self.search.new_forest(capacity, slots=1 if play.seconds > 0 else 8)
        self.slots: dict[int, int] = {}  # each game's tree in the forest
        self._beginning: list[tuple] = []  # games begun whose trees are not planted yet (`_plant`)
        self.simulations = 0  # simulations run, for throughput figures

    def warm_up(self) -> None:
        """Load what a first move would, in a small tree of its own: the compiled kernels from numba's cache,
        the network's session and its first run, before a worker's first chunk starts its clock
        (`matches/chunks.py`). The tree and its generator are this call's; call it on a player built for it,
        since its position cache keeps what it judged."""
        forest = self.search.new_forest(8 * WARM_UP_SIMULATIONS + 16, slots=1)
        rng = np.random.default_rng(0)
        slot = forest.new_tree(self.game.initial_state(rng), rng)
        self.search.run(forest, [slot], WARM_UP_SIMULATIONS)

    def begin(self, game_id, state, rng):
        self._beginning.append((game_id, state, rng))

    def _plant(self) -> None:
        """Give every game begun since the last call its tree, the forest grown once for all of them: a
        match begins its games together, and a forest grown a tree at a time doubled its arrays again and
        again, each time writing pages it then dropped (0.3-0.5 s of a 32-game Kingdomino batch)."""
        if self._beginning:
            self.forest.make_room(len(self._beginning))
            for game_id, state, rng in self._beginning:
                self.slots[game_id] = self.forest.new_tree(state, rng)
            self._beginning.clear()

    def act(self, game_ids):
        self._plant()
        play, forest = self.play, self.forest
        slots = [self.slots[gid] for gid in game_ids]
        full = [play.full_search_fraction >= 1 or forest.rngs[s].random() < play.full_search_fraction for s in slots]
        for slot in slots:
            if forest.room(slot) <= self.reserve:
                forest.reset(slot, forest.root_state(slot))
        if self.gumbel is not None:
            return self._act_gumbel(slots, full)
        noisy = [play.add_noise and f for f in full]
        self.search.prepare_roots(forest, slots, noisy)
        if play.seconds > 0:
            self.simulations += self._simulate_for(slots, noisy, play.seconds * len(slots)) * len(slots)
            return [self._pick(slot, True, noise) for slot, noise in zip(slots, noisy)]
        first = play.simulations if all(full) else play.fast_simulations
        self.search.simulate(forest, slots, first, self._forced(slots, noisy))
        extra = [s for s, f in zip(slots, full) if f]
        if extra and first < play.simulations:
            self.search.simulate(
                forest, extra, play.simulations - first, self._forced(extra, [play.add_noise] * len(extra))
            )
        self.simulations += first * len(slots) + (play.simulations - first) * len(extra)
        return [self._pick(slot, is_full, noise) for slot, is_full, noise in zip(slots, full, noisy)]

    def _simulate_for(self, slots: list[int], noisy: list[bool], seconds: float) -> int:
        """Simulate every tree until `seconds` have passed (at least one step), `simulations` ran or a
        tree has no room for another step; how many ran."""
        deadline, done = time.perf_counter() + seconds, 0
        between_looks = max(CLOCK_STEP, self.search.config.parallel_leaves)
        room = min(self.forest.room(slot) for slot in slots) // 2  # simulations the fullest tree has room for
        limit = min(self.play.simulations, room)
        while done < limit and (done == 0 or time.perf_counter() < deadline):
            step = min(between_looks, limit - done)
            self.search.simulate(self.forest, slots, step, self._forced(slots, noisy))
            done += step
        return done

    def _forced(self, slots: list[int], noisy: list[bool]):
        """KataGo's forced playouts at the noisy roots (`search.forced_playouts`), or None when off."""
        k = self.search.config.forced_playouts
        return forced_root_actions(self.forest, slots, noisy, k) if k > 0 and any(noisy) else None

    def _act_gumbel(self, slots: list[int], full: list[bool]) -> list[tuple[int, np.ndarray | None]]:
        """Gumbel root search (pipeline/search/gumbel.py): the move is sequential halving's choice and
        the policy target the improved policy; a fast (playout-capped) search runs Gumbel too, with
        its smaller budget and no noise, and yields no target. No temperature: Gumbel noise explores."""
        play = self.play
        budgets = [play.simulations if f else play.fast_simulations for f in full]
        choices = self.gumbel.run(self.forest, slots, budgets, [play.add_noise and f for f in full])
        self.simulations += sum(budgets)
        return [(c.action, c.policy if f else None) for c, f in zip(choices, full)]

    def _pick(self, slot: int, full: bool, noisy: bool) -> tuple[int, np.ndarray | None]:
        forest, config = self.forest, self.search.config
        visits = forest.root_visits(slot).astype(np.float64)
        if noisy and config.forced_playouts > 0:
            policy = pruned_policy(forest, slot, config.c_puct, config.forced_playouts)
        else:
            policy = visits / visits.sum()
        opening = self.game.ply(forest.root_state(slot)) < self.play.temperature_moves
        temperature = self.play.temperature if opening else self.play.temperature_after
        if temperature > 0:
            weights = visits ** (1.0 / temperature)
            action = int(forest.rngs[slot].choice(len(weights), p=weights / weights.sum()))
        else:
            action = int(np.argmax(visits))
        return action, policy.astype(np.float32) if full else None

    def root_value(self, game_id) -> np.ndarray:
        """Mean backed-up value vector (absolute seats) of the root searched by the last `act`."""
        return self.forest.root_value(self.slots[game_id])

    def observe(self, game_id, action, state):
        self._plant()  # another player may move first
        slot = self.slots[game_id]
        if not (self.play.reuse_tree and self.forest.advance(slot, action, state)):
            self.forest.reset(slot, state)

    def end(self, game_id):
        self._plant()
        self.forest.release(self.slots.pop(game_id))


def uct_agent(
    game, simulations: int, seed: int, c_uct: float = 1.41, name: str | None = None, seconds: float = 0.0
) -> SearchAgent:
    """Classic MCTS (Wheeler): UCB1 selection, one random rollout per new node; `seconds` > 0 searches
    by time (`PlayConfig.seconds`), at most `simulations` a move."""
    return SearchAgent(
        game,
        RolloutEvaluator(game, seed),
        SearchConfig(selection="ucb1", c_uct=c_uct),
        PlayConfig(simulations=simulations, seconds=seconds),
        name or f"uct{simulations}",
    )
