"""Fixed Pig strategies that serve as oracles for two-player Pig: the optimal policy solved by value
iteration (Neller & Presser) and the classic "hold at 20". No search, no randomness."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pipeline.agents.base import PositionAgent
from pipeline.games.pig import HOLD, ROLL, PigGame
from pipeline.pig_solver import solve_pig


@lru_cache(maxsize=4)
def optimal_rolls(goal: int) -> np.ndarray:
    """rolls[i, j, k]: roll with own score i, opponent score j, turn total k (solved once per process)."""
    return solve_pig(goal)[1]


def hold_at_rolls(goal: int, threshold: int) -> np.ndarray:
    i, _, k = np.meshgrid(np.arange(goal), np.arange(goal), np.arange(goal), indexing="ij")
    return (k < threshold) & (i + k < goal)


class PigPolicyAgent(PositionAgent):
    """Plays two-player Pig from a table: rolls[own score, opponent score, turn total] (build it with
    `pig_table_agent`)."""

    def __init__(self, game: PigGame, rolls: np.ndarray, name: str):
        super().__init__(game, name)
        self.rolls = rolls

    def choose(self, state, rng):
        own, other = state.scores[state.mover], state.scores[1 - state.mover]
        reached = own + state.turn_total >= self.game.goal  # holding wins, and is the only legal move
        return HOLD if reached or not self.rolls[own, other, state.turn_total] else ROLL


def pig_table_agent(game, name: str, hold_at: int | None = None) -> PigPolicyAgent:
    """The optimal player, or "hold at `hold_at`"; refuses anything but two-player Pig first."""
    if not isinstance(game, PigGame) or game.num_players != 2:
        raise ValueError(f"{name}: a Pig policy table needs two-player Pig, got {game.name}")
    rolls = optimal_rolls(game.goal) if hold_at is None else hold_at_rolls(game.goal, hold_at)
    return PigPolicyAgent(game, rolls, name)
