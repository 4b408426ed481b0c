"""Every player behind one interface, driven by the arena for many games at once.

The arena tells an agent when a game begins, asks it for moves in batches (one call for all games
where it is to move), and reports every move played so search agents can reuse their trees.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Agent(Protocol):
    name: str

    def begin(self, game_id: int, state: Any, rng: np.random.Generator) -> None: ...

    def act(self, game_ids: list[int]) -> list[tuple[int, np.ndarray | None]]:
        """Moves for these games, each with the search's visit distribution (None if no search).

        An agent that searches may also offer `root_value(game_id)`: the mean backed-up value vector
        (absolute seats) of the root it just searched in that game, read after `act` and before
        `observe` (self-play mixes it into the value targets)."""

    def observe(self, game_id: int, action: int, state: Any) -> None:
        """`action` was played in game `game_id`, which is now in `state`."""

    def end(self, game_id: int) -> None: ...


class PositionAgent:
    """A player that picks its move from the position alone, keeping no tree: the arena's per-game
    bookkeeping in one place; a subclass writes `choose(state, rng)`."""

    def __init__(self, game, name: str):
        self.game = game
        self.name = name
        self._games: dict[int, tuple[Any, np.random.Generator]] = {}

    def choose(self, state: Any, rng: np.random.Generator) -> int:
        raise NotImplementedError

    def begin(self, game_id, state, rng):
        self._games[game_id] = (state, rng)

    def act(self, game_ids):
        return [(self.choose(*self._games[gid]), None) for gid in game_ids]

    def observe(self, game_id, action, state):
        self._games[game_id] = (state, self._games[game_id][1])

    def end(self, game_id):
        del self._games[game_id]


class RandomAgent(PositionAgent):
    """Uniformly random legal moves."""

    def __init__(self, game, name: str = "random"):
        super().__init__(game, name)

    def choose(self, state, rng):
        return int(rng.choice(self.game.legal_actions(state)))


class Teaching:
    """A player whose every move is recorded as a policy target: a teacher's games, whose moves a network
    learns to imitate (`teacher.player`). The target is the player's own where it gives one (`mce` with
    a temperature: its moves' values, softened), else its move, one-hot. Anything else (its name, its
    simulations, its root value where it has one) is the player's own."""

    def __init__(self, agent: Agent, num_actions: int):
        self.agent = agent
        self.num_actions = num_actions

    def act(self, game_ids):
        moves = []
        for action, policy in self.agent.act(game_ids):
            if policy is None:
                policy = np.zeros(self.num_actions, dtype=np.float32)
                policy[action] = 1.0
            moves.append((action, policy))
        return moves

    def __getattr__(self, name):
        return getattr(self.agent, name)
