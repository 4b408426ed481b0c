"""Depth-limited alpha-beta for Connect-4, the baseline of Parikh & Wu's appendix (depths 1 to 7).

Negamax on Pons' bitboards (the layout of `ConnectGame("connect4")` and the solver), compiled with
numba. At the horizon a position scores the open threes of the side to move minus the opponent's:
empty cells that would complete four (the solver's `winning_cells`). A win scores above any
heuristic, sooner wins higher. Equally scored moves are chosen at random, so repeated games differ.
"""

from __future__ import annotations

import numpy as np

from alphazero_games.connect.solvers.connect4 import (
    CELLS,
    CENTRE_FIRST,
    WIDTH,
    bottom_mask,
    column_mask,
    popcount,
    top_mask,
    winning_cells,
)
from pipeline.agents.base import PositionAgent
from pipeline.plumbing.kernel_cache import kernel

WIN = 1000  # above any heuristic (at most 42 open cells a side)


@kernel
def _move_bits(mask, col):
    """The cell a stone dropped in `col` lands on, 0 if the column is full."""
    if mask & top_mask(col):
        return np.uint64(0)
    return (mask + bottom_mask(col)) & column_mask(col)


@kernel
def _open_threes(position, mask):
    """Empty cells completing four for the side to move, minus those of the opponent."""
    return popcount(winning_cells(position, mask)) - popcount(winning_cells(position ^ mask, mask))


@kernel
def _negamax(position, mask, moves, depth, alpha, beta):
    """Score for the side to move (`position` = its stones, `mask` = all stones)."""
    if moves == CELLS:
        return 0
    if depth == 0:  # the horizon: depth d looks d plies ahead, as in the textbook
        return _open_threes(position, mask)
    wins = winning_cells(position, mask)
    for col in range(WIDTH):
        move = _move_bits(mask, col)
        if move and (wins & move):
            return WIN + CELLS - moves
    best = -WIN - CELLS - 1
    for i in range(WIDTH):
        move = _move_bits(mask, CENTRE_FIRST[i])
        if not move:
            continue
        score = -_negamax(position ^ mask, mask | move, moves + 1, depth - 1, -beta, -alpha)
        if score > best:
            best = score
        if score > alpha:
            alpha = score
        if alpha >= beta:
            break
    return best


@kernel
def column_values(position, mask, moves, depth):
    """Exact depth-limited value of every column (−∞ for a full one), one full window each."""
    values = np.full(WIDTH, -np.inf)
    wins = winning_cells(position, mask)
    for col in range(WIDTH):
        move = _move_bits(mask, col)
        if not move:
            continue
        if wins & move:
            values[col] = WIN + CELLS - moves
        elif moves + 1 == CELLS:
            values[col] = 0
        else:
            inf = 10 * WIN
            values[col] = -_negamax(position ^ mask, mask | move, moves + 1, depth - 1, -inf, inf)
    return values


class AlphaBetaAgent(PositionAgent):
    def __init__(self, game, depth: int, name: str | None = None):
        if getattr(game, "name", None) != "connect4":
            raise ValueError(f"alpha-beta plays connect4 only, not {getattr(game, 'name', game)}")
        if depth < 1:
            raise ValueError(f"alpha-beta depth must be at least 1, got {depth}")
        super().__init__(game, name or f"alphabeta{depth}")
        self.depth = depth

    def choose(self, state, rng):
        mask = np.uint64(state.boards[0] | state.boards[1])
        values = column_values(np.uint64(state.boards[state.mover]), mask, state.ply, self.depth)
        return int(rng.choice(np.flatnonzero(values == values.max())))


def from_spec(game, spec) -> AlphaBetaAgent:
    """`alphabeta:N`, as `AgentSpec` asks the players Connect-4 brings (`rules.py`'s `CONNECT4_PLAYERS`)."""
    if spec.number < 1:
        raise ValueError(f"{spec.name}: expected alphabeta:N, N the search depth")
    return AlphaBetaAgent(game, spec.number, spec.name)
