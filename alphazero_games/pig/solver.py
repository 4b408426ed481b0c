"""Two-player Pig by value iteration (Neller & Presser, "Optimal play of the dice game Pig", 2004):
P[i, j, k] is the probability that the player to move wins with banked score i, opponent score j and
turn total k; rolling is worth (1 - P[j, i, 0] + sum over faces 2-6 of P[i, j, k + face]) / 6, holding
1 - P[j, i + k, 0], and P is the better of the two (1 once i + k reaches the goal).

The same arithmetic scores two fixed roll/hold tables against each other exactly, which measures a
policy without the sampling error of played games.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

MAX_GOAL = 200  # value iteration holds goal^2 x (goal + 6) numbers a sweep: 8 million here, 8 billion at 1,000


@lru_cache(maxsize=8)
def _grid(goal: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores i, j and turn totals k up to goal + 5, the furthest one roll reaches (read-only, cached)."""
    return np.meshgrid(np.arange(goal), np.arange(goal), np.arange(goal + 6), indexing="ij")


def _holding_wins(goal: int) -> np.ndarray:
    i, _, k = _grid(goal)
    return i + k >= goal


@lru_cache(maxsize=8)
def _after_hold(goal: int) -> tuple[np.ndarray, np.ndarray]:
    """Where holding at (i, j, k < goal) leads: the opponent to move from (j, i + k), capped below the goal
    (holding at or past the goal is a win, handled apart). Cached: the iterations reuse it every sweep."""
    i, j, k = (axis[:, :, :goal] for axis in _grid(goal))
    return j, np.minimum(i + k, goal - 1)


def _roll_and_hold(mine: np.ndarray, after_turn: np.ndarray, goal: int) -> tuple[np.ndarray, np.ndarray]:
    """Worth of rolling and of holding at every (i, j, k < goal) to the player we follow, given
    `mine[i, j, k]` (that worth while the mover's turn goes on) and `after_turn[a, b]` (the worth once
    the other player starts a turn with own score a and opponent score b)."""
    roll = (after_turn.T[:, :, None] + sum(mine[:, :, face : face + goal] for face in range(2, 7))) / 6.0
    return roll, after_turn[_after_hold(goal)]


def solve_pig(goal: int, tolerance: float = 1e-10, max_iterations: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Win probabilities P[i, j, k] and the optimal action (True = roll) for i, j, k < goal."""
    g = goal
    won = _holding_wins(g)
    p = np.where(won, 1.0, 0.5)
    for _ in range(max_iterations):
        roll, hold = _roll_and_hold(p, 1.0 - p[:, :, 0], g)
        new = np.where(won[:, :, :g], 1.0, np.maximum(roll, hold))
        change = float(np.abs(new - p[:, :, :g]).max())
        p[:, :, :g] = new
        if change < tolerance:
            break
    rolls = (roll > hold) & ~won[:, :, :g]
    return p[:, :, :g], rolls


def match_win_probability(rolls_a: np.ndarray, rolls_b: np.ndarray, tolerance: float = 1e-12) -> tuple[float, float]:
    """Exact chance that the player with table `rolls_a` beats the one with `rolls_b` (tables
    [own score, opponent score, turn total] -> roll), moving first and moving second."""
    g = rolls_a.shape[0]
    won = _holding_wins(g)
    # A's chance of winning while A moves (a) and while B moves (b); a table that never banks points
    # never wins, which is where the iteration settles for it.
    a, b = won.astype(float), np.zeros(won.shape)
    a_rolls, b_rolls = rolls_a & ~won[:, :, :g], rolls_b & ~won[:, :, :g]
    for _ in range(1_000_000):
        roll, hold = _roll_and_hold(a, b[:, :, 0], g)
        new_a = np.where(won[:, :, :g], 1.0, np.where(a_rolls, roll, hold))
        roll, hold = _roll_and_hold(b, a[:, :, 0], g)
        new_b = np.where(won[:, :, :g], 0.0, np.where(b_rolls, roll, hold))
        change = max(float(np.abs(new_a - a[:, :, :g]).max()), float(np.abs(new_b - b[:, :, :g]).max()))
        a[:, :, :g], b[:, :, :g] = new_a, new_b
        if change < tolerance:
            break
    return float(a[0, 0, 0]), float(b[0, 0, 0])


def hold_thresholds(rolls: np.ndarray) -> np.ndarray:
    """For each (own score i, opponent score j): the turn total at which the optimal player first holds."""
    g = rolls.shape[0]
    thresholds = np.zeros((g, g), dtype=np.int64)
    for a in range(g):
        for b in range(g):
            holds = np.flatnonzero(~rolls[a, b, : g - a])
            thresholds[a, b] = holds[0] if len(holds) else g - a
    return thresholds
