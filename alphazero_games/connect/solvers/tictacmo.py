"""Exact max^n values of Tic-Tac-Mo (3x5 board, three in a row, three seats moving in turn).

A numba-compiled depth-first max^n search over per-seat 15-bit bitboards (bit a = action a of
`ConnectGame("tictacmo")`, cells row by row from the top-left), with a transposition table keyed by
the position's smallest image under the 4 symmetries of the 3x5 rectangle. The mover is implied by
the stone count, and scores are win/loss/draw, so a value vector is just an outcome: the winning seat
or a draw. That leaves one kind of tie: when every move loses, the mover is indifferent to which
opponent wins (both vectors give it -1, and the others' sum and mean are equal too, so "paranoid" or
"others' mean" rules cannot break it).

Tie-break (default "next"): a mover that loses whatever it does hands the win to the next seat to
move, (mover + 1) % 3. We prefer it to the lowest action index because it depends on values only,
not on how the board is oriented, so it commutes with the symmetries and lets the table hold one
entry per symmetry class. "previous" favours (mover + 2) % 3 instead, and "first" takes the lowest
action index among tied moves (searched without symmetry reduction, since it is orientation-bound).

Result: the empty board, and every first move, is a draw (0, 0, 0) under all three tie-breaks, though
the tie-break does change the values of some positions from the third ply on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from alphazero_games.connect.rules import ConnectState
from pipeline.games import make_game
from pipeline.games.base import win_loss_scores
from pipeline.plumbing.kernel_cache import kernel

ROWS, COLS, SEATS = 3, 5, 3
CELLS = ROWS * COLS
FULL = (1 << CELLS) - 1
DRAW = SEATS  # outcome code: the winning seat 0..2, or DRAW
TIE_BREAKS = ("next", "previous", "first")
_ABORT = 255  # the table is too full: unwind, grow it, search again
_EMPTY = np.uint32(0xFFFFFFFF)  # no key: real keys use 30 bits
_MAX_LOAD = 0.75


def _lines() -> np.ndarray:
    """Every three-in-a-row as a cell mask, listed per cell: (CELLS, 6) with 0 padding."""
    cells = [[r * COLS + c for c in range(COLS)] for r in range(ROWS)]
    masks = []
    for r in range(ROWS):
        for c in range(COLS):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_r, end_c = r + 2 * dr, c + 2 * dc
                if 0 <= end_r < ROWS and 0 <= end_c < COLS:
                    masks.append(sum(1 << cells[r + i * dr][c + i * dc] for i in range(3)))
    per_cell = np.zeros((CELLS, 6), dtype=np.int64)
    for a in range(CELLS):
        through = [m for m in masks if (m >> a) & 1]
        per_cell[a, : len(through)] = through
    return per_cell


def _transforms() -> np.ndarray:
    """(4, 2**15) images of every bitboard under identity, left-right, up-down and 180-degree turns."""
    maps = [
        lambda r, c: (r, c),
        lambda r, c: (r, COLS - 1 - c),
        lambda r, c: (ROWS - 1 - r, c),
        lambda r, c: (ROWS - 1 - r, COLS - 1 - c),
    ]
    boards = np.arange(1 << CELLS, dtype=np.int64)
    out = np.zeros((len(maps), 1 << CELLS), dtype=np.int64)
    for s, f in enumerate(maps):
        for a in range(CELLS):
            r, c = f(*divmod(a, COLS))
            out[s] |= ((boards >> a) & 1) << (r * COLS + c)
    return out


def _spread() -> np.ndarray:
    """Bit a of a 15-bit board moved to bit 2a, so two boards interleave into one 30-bit key."""
    boards = np.arange(1 << CELLS, dtype=np.int64)
    out = np.zeros(1 << CELLS, dtype=np.int64)
    for a in range(CELLS):
        out |= ((boards >> a) & 1) << (2 * a)
    return out


LINES, TRANSFORMS, SPREAD = _lines(), _transforms(), _spread()


@kernel
def _key(b0, b1, b2, transforms, spread):
    """Smallest 2-bits-per-cell code (seat s -> s + 1) over the given symmetries."""
    best = -1
    for s in range(transforms.shape[0]):
        t2 = transforms[s, b2]
        key = spread[transforms[s, b0] | t2] | (spread[transforms[s, b1] | t2] << 1)
        if best < 0 or key < best:
            best = key
    return best


@kernel
def _slot(key, keys):
    """Fibonacci hashing into a power-of-two table, then linear probing to the key or a free slot."""
    mask = keys.shape[0] - 1
    slot = ((np.uint64(key) * np.uint64(11400714819323198485)) >> np.uint64(32)) & np.uint64(mask)
    i = np.int64(slot)
    while keys[i] != _EMPTY and keys[i] != key:
        i = (i + 1) & mask
    return i


@kernel
def _completes_line(board, cell, lines):
    for j in range(lines.shape[1]):
        line = lines[cell, j]
        if line == 0:
            return False
        if board & line == line:
            return True
    return False


@kernel
def _rank(outcome, mover, tie):
    """Mover's preference: win 3, draw 2, a loss that the tie-break favours 1, another loss 0."""
    if outcome == mover:
        return 3
    if outcome == DRAW:
        return 2
    if (tie == 0 and outcome == (mover + 1) % SEATS) or (tie == 1 and outcome == (mover + 2) % SEATS):
        return 1
    return 0


@kernel
def _search(boards, mover, occupied, tie, lines, transforms, spread, keys, values, used):
    """Outcome of a live position under max^n; moves in action order, stopping at a win (nothing
    beats it, so the cut is exact). Returns _ABORT, storing nothing, once the table is too full."""
    key = _key(boards[0], boards[1], boards[2], transforms, spread)
    slot = _slot(key, keys)
    if keys[slot] == key:
        return values[slot]
    own = boards[mover]
    best, best_rank = -1, -1
    for a in range(CELLS):
        bit = 1 << a
        if occupied & bit:
            continue
        if _completes_line(own | bit, a, lines):
            outcome = mover
        elif occupied | bit == FULL:
            outcome = DRAW
        else:
            boards[mover] = own | bit
            nxt = (mover + 1) % SEATS
            outcome = _search(boards, nxt, occupied | bit, tie, lines, transforms, spread, keys, values, used)
            boards[mover] = own
            if outcome == _ABORT:
                return _ABORT
        rank = _rank(outcome, mover, tie)
        if rank > best_rank:
            best, best_rank = outcome, rank
            if rank == 3:
                break
    if used[0] >= _MAX_LOAD * keys.shape[0]:
        return _ABORT
    slot = _slot(key, keys)  # the children's entries may have taken the first free slot
    keys[slot] = key
    values[slot] = best
    used[0] += 1
    return best


@kernel
def _rehash(old_keys, old_values, keys, values):
    for i in range(old_keys.shape[0]):
        if old_keys[i] != _EMPTY:
            slot = _slot(old_keys[i], keys)
            keys[slot] = old_keys[i]
            values[slot] = old_values[i]


class TicTacMoSolver:
    """Max^n values of Tic-Tac-Mo positions; the table persists, so later queries reuse earlier work.

    A position is a `ConnectState` of `make_game("tictacmo")` or a sequence of action numbers played
    from the empty board. Values are score vectors over absolute seats, as `game.scores` gives them.
    """

    def __init__(self, tie_break: str = "next", table_bits: int = 20):
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie-break {tie_break!r}; expected one of {', '.join(TIE_BREAKS)}")
        self.game = make_game("tictacmo")
        self.tie_break = tie_break
        self._tie = TIE_BREAKS.index(tie_break)
        self._transforms = TRANSFORMS[:1] if tie_break == "first" else TRANSFORMS
        self._keys = np.full(1 << table_bits, _EMPTY, dtype=np.uint32)
        self._values = np.zeros(1 << table_bits, dtype=np.uint8)
        self._used = np.zeros(1, dtype=np.int64)

    @property
    def positions(self) -> int:
        """Live positions solved so far (one per symmetry class unless the tie-break is "first")."""
        return int(self._used[0])

    def state(self, position: ConnectState | Sequence[int]) -> ConnectState:
        """The state a position stands for; moves go through `game.step`, so illegal ones raise IllegalMove."""
        if isinstance(position, ConnectState):
            return position
        state = self.game.initial_state()
        for action in position:
            state, _ = self.game.step(state, int(action))
        return state

    def value(self, position: ConnectState | Sequence[int]) -> np.ndarray:
        """The max^n score vector of a position (its scores if the game is over)."""
        state = self.state(position)
        if state.done:
            return self.game.scores(state)
        return win_loss_scores(SEATS, self._outcome(state))

    def move_values(self, position: ConnectState | Sequence[int]) -> dict[int, np.ndarray]:
        """The max^n score vector after each legal action (none once the game is over)."""
        state = self.state(position)
        return {a: self.value(self.game.step(state, a)[0]) for a in self.game.legal_actions(state)}

    def _outcome(self, state: ConnectState) -> int | None:
        boards = np.array([_action_board(b) for b in state.boards], dtype=np.int64)
        occupied = int(boards[0] | boards[1] | boards[2])
        while True:
            tables = (LINES, self._transforms, SPREAD, self._keys, self._values, self._used)
            outcome = _search(boards, state.mover, occupied, self._tie, *tables)
            if outcome != _ABORT:
                return None if outcome == DRAW else int(outcome)
            self._grow()

    def _grow(self) -> None:
        keys = np.full(2 * self._keys.shape[0], _EMPTY, dtype=np.uint32)
        values = np.zeros(2 * self._keys.shape[0], dtype=np.uint8)
        _rehash(self._keys, self._values, keys, values)
        self._keys, self._values = keys, values


def _action_board(board: int) -> int:
    """A `ConnectState` bitboard (bit c*(ROWS+1) + row-from-bottom, see rules.py) -> bit per action."""
    out = 0
    for a in range(CELLS):
        r, c = divmod(a, COLS)
        if (board >> (c * (ROWS + 1) + ROWS - 1 - r)) & 1:
            out |= 1 << a
    return out


class TicTacMoSolution(NamedTuple):
    state: ConnectState  # the position solved
    value: np.ndarray  # its max^n score vector, seats 0, 1, 2
    move_values: dict[int, np.ndarray]  # score vector after each legal action
    positions: int  # live positions in the table
    seconds: float
    solver: TicTacMoSolver  # holds the table: further queries are cheap


def solve_tictacmo(position: ConnectState | Sequence[int] = (), tie_break: str = "next") -> TicTacMoSolution:
    """Solve a position, by default the empty board: about 10 s and 11 million positions on one core
    with a symmetric tie-break, 4 times the positions with "first" (the first call also compiles)."""
    solver = TicTacMoSolver(tie_break, table_bits=26 if tie_break == "first" else 24)
    state = solver.state(position)
    start = time.perf_counter()
    value = solver.value(state)
    move_values = solver.move_values(state)
    seconds = time.perf_counter() - start
    return TicTacMoSolution(state, value, move_values, solver.positions, seconds, solver)
