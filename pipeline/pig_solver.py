"""Two-player Pig by value iteration (Neller & Presser, "Optimal play of the dice game Pig", 2004):
P[i, j, k] is the probability that the player to move wins with banked score i, opponent score j and
turn total k; rolling is worth (1 - P[j, i, 0] + sum over faces 2-6 of P[i, j, k + face]) / 6, holding
1 - P[j, i + k, 0], and P is the better of the two (1 once i + k reaches the goal).
"""

from __future__ import annotations

import numpy as np


def solve_pig(goal: int, tolerance: float = 1e-10, max_iterations: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Win probabilities P[i, j, k] and the optimal action (True = roll) for i, j, k < goal."""
    g = goal
    i, j, k = np.meshgrid(np.arange(g), np.arange(g), np.arange(g + 6), indexing="ij")
    won = i + k >= g  # holding now reaches the goal
    p = np.where(won, 1.0, 0.5)
    hold_target = np.minimum(i + k, g - 1)[:, :, :g]
    for _ in range(max_iterations):
        lose_turn = 1.0 - p[:, :, 0].T  # after a 1 the opponent moves from (j, i, 0)
        roll = (lose_turn[:, :, None] + sum(p[:, :, face : face + g] for face in range(2, 7))) / 6.0
        opponent_after_hold = p[j[:, :, :g], hold_target, 0]
        hold = np.where(won[:, :, :g], 1.0, 1.0 - opponent_after_hold)
        new = np.where(won[:, :, :g], 1.0, np.maximum(roll, hold))
        change = float(np.abs(new - p[:, :, :g]).max())
        p[:, :, :g] = new
        if change < tolerance:
            break
    rolls = (roll > hold) & ~won[:, :, :g]
    return p[:, :, :g], rolls


def hold_thresholds(rolls: np.ndarray) -> np.ndarray:
    """For each (own score i, opponent score j): the turn total at which the optimal player first holds."""
    g = rolls.shape[0]
    thresholds = np.zeros((g, g), dtype=np.int64)
    for a in range(g):
        for b in range(g):
            holds = np.flatnonzero(~rolls[a, b, : g - a])
            thresholds[a, b] = holds[0] if len(holds) else g - a
    return thresholds
