"""The k-in-a-row rules compiled over int64 rows (`pipeline/games/compiled.py`), for search's compiled
expansion: the same bitboards as `rules.py` (Pons' column layout, a spare bit atop each column), one
row a state: each seat's board, the column heights, the mover, the ply, the winner (-1: none) and
whether the game is over. The variant's constants travel as `shape` = (rows, cols, k, players, gravity).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from alphazero_games.connect.state import ConnectState
from pipeline.games.compiled import CompiledRules
from pipeline.plumbing.kernel_cache import kernel

ROWS, COLS, K, PLAYERS, GRAVITY = range(5)
TAIL = 4  # mover, ply, winner, done: after the boards and the heights


@kernel
def _wins(board, rows, k):
    height = rows + 1
    for shift in (1, height, height - 1, height + 1):
        line = board
        for step in range(1, k):
            line &= board >> (step * shift)
            if line == 0:
                break
        if line != 0:
            return True
    return False


@kernel
def _cell_bit(rows, cols, action):
    """The bit of placement action `action` (cells numbered row by row from the top-left)."""
    return (action % cols) * (rows + 1) + (rows - 1 - action // cols)


@kernel
def _step(shape, row, action, out):
    rows, cols, k, players = shape[ROWS], shape[COLS], shape[K], shape[PLAYERS]
    tail = players + cols
    out[:] = row
    mover = row[tail]
    if shape[GRAVITY]:
        bit = action * (rows + 1) + row[players + action]
        out[players + action] += 1
    else:
        bit = _cell_bit(rows, cols, action)
    board = row[mover] | (np.int64(1) << bit)
    out[mover] = board
    ply = row[tail + 1] + 1
    won = _wins(board, rows, k)
    out[tail] = (mover + 1) % players
    out[tail + 1] = ply
    out[tail + 2] = mover if won else -1
    out[tail + 3] = 1 if won or ply == rows * cols else 0


@kernel
def _mover(shape, row):
    tail = shape[PLAYERS] + shape[COLS]
    return -1 if row[tail + 3] else row[tail]


@kernel
def _legal(shape, row, out):
    rows, cols, players = shape[ROWS], shape[COLS], shape[PLAYERS]
    if shape[GRAVITY]:
        for c in range(cols):
            out[c] = row[players + c] < rows
        return
    occupied = np.int64(0)
    for seat in range(players):
        occupied |= row[seat]
    for action in range(rows * cols):
        out[action] = (occupied >> _cell_bit(rows, cols, action)) & 1 == 0


@kernel
def _encode(shape, row, out):
    """Each seat's stones in turn order from the mover, then the mover's turn plane (`rules.py`'s `encode_batch`)."""
    rows, cols, players = shape[ROWS], shape[COLS], shape[PLAYERS]
    seat_to_move = row[players + cols]
    out[:] = 0.0
    for i in range(players):
        board = row[(seat_to_move + i) % players]
        for r in range(rows):
            for c in range(cols):
                if (board >> (c * (rows + 1) + rows - 1 - r)) & 1:
                    out[i, r, c] = 1.0
    out[players + seat_to_move] = 1.0


@kernel
def step(shape, rows, parents, actions, children, count):
    for i in range(count):
        _step(shape, rows[parents[i]], actions[i], rows[children[i]])


@kernel
def mover(shape, rows, nodes, count, out):
    for i in range(count):
        out[i] = _mover(shape, rows[nodes[i]])


@kernel
def legal(shape, rows, nodes, count, out):
    for i in range(count):
        _legal(shape, rows[nodes[i]], out[nodes[i]])


@kernel
def encode(shape, rows, nodes, count, out):
    for i in range(count):
        _encode(shape, rows[nodes[i]], out[i])


def _to_row(state: ConnectState) -> np.ndarray:
    winner = -1 if state.winner is None else state.winner
    return np.array([*state.boards, *state.heights, state.mover, state.ply, winner, state.done], dtype=np.int64)


def _from_row(players: int, cols: int, row: np.ndarray) -> ConnectState:
    values = row.tolist()
    mover, ply, winner, done = values[players + cols :]
    boards, heights = tuple(values[:players]), tuple(values[players : players + cols])
    return ConnectState(boards, heights, mover, ply, None if winner < 0 else winner, bool(done))


def compiled_rules(game) -> CompiledRules:
    """`game`'s (a `ConnectGame`) rules over rows."""
    players, cols = game.num_players, game.cols
    shape = np.array([game.rows, cols, game.k, players, game.gravity], dtype=np.int64)
    from_row = partial(_from_row, players, cols)
    return CompiledRules(players + cols + TAIL, shape, _to_row, from_row, step, mover, legal, encode)
