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
        """Moves for these games, each with the search's visit distribution (None if no search)."""

    def observe(self, game_id: int, action: int, state: Any) -> None:
        """`action` was played in game `game_id`, which is now in `state`."""

    def end(self, game_id: int) -> None: ...


class RandomAgent:
    """Uniformly random legal moves."""

    def __init__(self, game, name: str = "random"):
        self.game = game
        self.name = name
        self._games: dict[int, tuple[Any, np.random.Generator]] = {}

    def begin(self, game_id, state, rng):
        self._games[game_id] = (state, rng)

    def act(self, game_ids):
        moves = []
        for gid in game_ids:
            state, rng = self._games[gid]
            moves.append((int(rng.choice(self.game.legal_actions(state))), None))
        return moves

    def observe(self, game_id, action, state):
        self._games[game_id] = (state, self._games[game_id][1])

    def end(self, game_id):
        del self._games[game_id]
