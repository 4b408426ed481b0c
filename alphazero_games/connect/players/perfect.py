"""A perfect Connect-4 player for evaluation (Parikh & Wu fig. 5): the exact solver's best column,
ties broken at random so repeated games differ. It wins as fast and loses as slowly as possible."""

from __future__ import annotations

import numpy as np

from alphazero_games.connect.solvers.connect4 import Connect4Solver
from pipeline.agents.base import PositionAgent


class PerfectConnect4Agent(PositionAgent):
    def __init__(self, game, name: str = "solver"):
        if getattr(game, "name", None) != "connect4":
            raise ValueError(f"{name}: the perfect solver plays connect4 only, not {getattr(game, 'name', game)}")
        super().__init__(game, name)
        self.solver = Connect4Solver()

    def choose(self, state, rng):
        mask = state.boards[0] | state.boards[1]
        scores = np.array(self.solver.position_column_scores(state.boards[state.mover], mask, state.ply))
        return int(rng.choice(np.flatnonzero(scores == scores.max())))


def from_spec(game, spec) -> PerfectConnect4Agent:
    """`solver`, as `AgentSpec` asks the players Connect-4 brings (`rules.py`'s `CONNECT4_PLAYERS`)."""
    return PerfectConnect4Agent(game, spec.name)
