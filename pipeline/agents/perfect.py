"""A perfect Connect-4 player for evaluation (seed 004 fig. 5): the exact solver's best column,
ties broken at random so repeated games differ. It wins as fast and loses as slowly as possible."""

from __future__ import annotations

import numpy as np

from pipeline.connect4_solver import Connect4Solver


class PerfectConnect4Agent:
    def __init__(self, game, name: str = "solver"):
        if getattr(game, "name", None) != "connect4":
            raise ValueError(f"{name}: the perfect solver plays connect4 only, not {getattr(game, 'name', game)}")
        self.game, self.name = game, name
        self.solver = Connect4Solver()
        self._games: dict = {}

    def begin(self, game_id, state, rng):
        self._games[game_id] = (state, rng)

    def act(self, game_ids):
        moves = []
        for gid in game_ids:
            state, rng = self._games[gid]
            mine = state.boards[state.mover]
            mask = state.boards[0] | state.boards[1]
            scores = np.array(self.solver.position_column_scores(mine, mask, state.ply))
            moves.append((int(rng.choice(np.flatnonzero(scores == scores.max()))), None))
        return moves

    def observe(self, game_id, action, state):
        self._games[game_id] = (state, self._games[game_id][1])

    def end(self, game_id):
        del self._games[game_id]
