"""k-in-a-row games for any number of players, with or without gravity (Petosa & Balch's four games).

Each seat's stones are a Python-int bitboard in Pascal Pons' column layout: cell (row r from the
bottom, column c) is bit c*(H+1)+r, so a spare bit atop each column stops lines wrapping around and
one shift per direction finds every line. Placement games number actions row-major from the top-left
cell; gravity games number them by column.
"""

from __future__ import annotations

import random

import numpy as np

from alphazero_games.connect.state import ConnectState as ConnectState  # where the solvers and players take it
from pipeline.games.base import IllegalMove, Symmetry, win_loss_scores
from pipeline.games.compiled import CompiledRules

SEAT_SYMBOLS = "XOABCDEFGH"
# What standard Connect-4 brings besides its rules (`base.py`'s `BringsPlayers`, `BringsExperiments`):
# the solver's perfect play and Parikh & Wu's alpha-beta; their table, games against perfect play and
# Pons' benchmark (the Connect-4 bot post). The other k-in-a-row games bring none.
CONNECT4_PLAYERS = {
    "alphabeta": "alphazero_games.connect.players.alphabeta:from_spec",
    "solver": "alphazero_games.connect.players.perfect:from_spec",
}
SOLVERS = {  # `python -m pipeline solve connect4` and `solve tictacmo` (`base.py`'s `BringsSolver`)
    "connect4": "alphazero_games.connect.commands.solve:connect4",
    "tictacmo": "alphazero_games.connect.commands.solve:tictacmo",
}
# `python -m pipeline bench`'s sizes (`base.py`'s `SizesItsBench`): the 4x64 SENet that was the Tic-Tac-Mo
# default before the 4x32 one, and the 5x64 SENet of the Connect-4 targets, kept so figures compare.
BENCH_SIZES = {"tictacmo": ("tictacmo", 4, 64, 1.0), "connect4": ("connect4", 5, 64, 0.5)}
CONNECT4_EXPERIMENTS = (
    "alphazero_games.connect.experiments.alphabeta_rates:EXPERIMENT",
    "alphazero_games.connect.experiments.solver_games:EXPERIMENT",
    "alphazero_games.connect.experiments.benchmark:EXPERIMENT",
)


class ConnectGame:
    """A k-in-a-row game on an H x W board for `num_players` seats that move in turn."""

    def __init__(self, name: str, rows: int, cols: int, k: int, num_players: int, gravity: bool):
        self.name = name
        self.rows, self.cols, self.k = rows, cols, k
        self.num_players = num_players
        self.gravity = gravity
        self.num_actions = cols if gravity else rows * cols
        self.observation_shape = (2 * num_players, rows, cols)
        column_height = rows + 1
        self._shifts = (1, column_height, column_height - 1, column_height + 1)
        # display cell (i from the top, j) -> bit index
        self._cell_bits = np.array(
            [j * column_height + (rows - 1 - i) for i in range(rows) for j in range(cols)], dtype=np.uint64
        )
        self._action_bit = [int(b) for b in self._cell_bits] if not gravity else None
        self._full = sum(1 << int(b) for b in self._cell_bits)

    def __repr__(self) -> str:
        return f"ConnectGame({self.name!r})"

    def joins_moves(self) -> bool:
        return self.gravity  # a column a character: the Connect-4 test sets' `4453`

    def seat_symbol(self, seat: int) -> str:
        return SEAT_SYMBOLS[seat]

    def players(self) -> dict[str, str]:
        return CONNECT4_PLAYERS if self.name == "connect4" else {}

    def experiments(self) -> tuple[str, ...]:
        return CONNECT4_EXPERIMENTS if self.name == "connect4" else ()

    def solver(self) -> str | None:
        return SOLVERS.get(self.name)

    def bench(self) -> tuple[str, int, int, float] | None:
        return BENCH_SIZES.get(self.name)

    def compiled_rules(self) -> CompiledRules:
        """The rules over int64 rows, for search's compiled expansion (`compiled.py`: imported here, so
        that reading the rules does not import numba)."""
        from alphazero_games.connect.compiled import compiled_rules

        return compiled_rules(self)

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self, rng=None) -> ConnectState:
        return ConnectState((0,) * self.num_players, (0,) * self.cols, 0, 0, None, False)

    def legal_actions(self, state: ConnectState) -> list[int]:
        if state.done:
            return []
        if self.gravity:
            return [c for c, h in enumerate(state.heights) if h < self.rows]
        occupied = 0
        for board in state.boards:
            occupied |= board
        return [a for a, bit in enumerate(self._action_bit) if not (occupied >> bit) & 1]

    def legal_mask(self, state: ConnectState) -> np.ndarray:
        if state.done:
            return np.zeros(self.num_actions, dtype=bool)
        if self.gravity:
            return np.array(state.heights) < self.rows
        occupied = 0
        for board in state.boards:
            occupied |= board
        return (np.uint64(occupied) >> self._cell_bits) & np.uint64(1) == 0

    def _bit(self, state: ConnectState, action: int) -> int:
        if self.gravity:
            if not 0 <= action < self.cols or state.heights[action] >= self.rows:
                raise IllegalMove(f"column {action + 1} is full or off the board")
            return action * (self.rows + 1) + state.heights[action]
        if not 0 <= action < self.num_actions:
            raise IllegalMove(f"cell {action + 1} is off the board")
        bit = self._action_bit[action]
        if any((board >> bit) & 1 for board in state.boards):
            raise IllegalMove(f"cell {action + 1} is taken")
        return bit

    def _wins(self, board: int) -> bool:
        for shift in self._shifts:
            line = board
            for step in range(1, self.k):
                line &= board >> (step * shift)
                if not line:
                    break
            if line:
                return True
        return False

    def step(self, state: ConnectState, action: int, rng=None) -> tuple[ConnectState, None]:
        if state.done:
            raise IllegalMove("the game is over")
        return self._place(state, action, self._bit(state, action))

    def step_legal(self, state: ConnectState, action: int, rng=None) -> tuple[ConnectState, None]:
        """`step` of an action from the state's legal mask, which search holds: the cell's checks (a
        fifth of a step's time) are left out."""
        if self.gravity:
            return self._place(state, action, action * (self.rows + 1) + state.heights[action])
        return self._place(state, action, self._action_bit[action])

    def _place(self, state: ConnectState, action: int, bit: int) -> tuple[ConnectState, None]:
        mover = state.mover
        board = state.boards[mover] | (1 << bit)
        boards = state.boards[:mover] + (board,) + state.boards[mover + 1 :]
        heights = state.heights
        if self.gravity:
            heights = heights[:action] + (heights[action] + 1,) + heights[action + 1 :]
        ply = state.ply + 1
        won = self._wins(board)
        done = won or ply == self.rows * self.cols
        next_state = ConnectState(boards, heights, (mover + 1) % self.num_players, ply, mover if won else None, done)
        return next_state, None

    def to_play(self, state: ConnectState) -> int:
        return state.mover

    def ply(self, state: ConnectState) -> int:
        return state.ply

    def is_terminal(self, state: ConnectState) -> bool:
        return state.done

    def scores(self, state: ConnectState) -> np.ndarray:
        return win_loss_scores(self.num_players, state.winner)

    def random_playout(self, state: ConnectState, rng: random.Random) -> np.ndarray:
        """Random moves to the end on raw bitboards: the inner loop of UCT's rollouts."""
        boards = list(state.boards)
        heights = list(state.heights)
        mover, ply, total = state.mover, state.ply, self.rows * self.cols
        winner = state.winner
        done = state.done
        occupied = 0
        for board in boards:
            occupied |= board
        while not done:
            if self.gravity:
                action = rng.choice([c for c, h in enumerate(heights) if h < self.rows])
                bit = action * (self.rows + 1) + heights[action]
                heights[action] += 1
            else:
                bit = rng.choice([b for b in self._action_bit if not (occupied >> b) & 1])
            occupied |= 1 << bit
            boards[mover] |= 1 << bit
            ply += 1
            if self._wins(boards[mover]):
                winner, done = mover, True
            elif ply == total:
                done = True
            mover = (mover + 1) % self.num_players
        return win_loss_scores(self.num_players, winner)

    # --- network view ------------------------------------------------------------------------
    def encode(self, state: ConnectState) -> np.ndarray:
        return self.encode_batch([state])[0]

    def encode_batch(self, states: list[ConnectState]) -> np.ndarray:
        """Planes per state: each seat's stones in turn order from the mover, then the mover's seat
        one-hot as turn planes (Petosa & Balch fig. 4)."""
        n, p = len(states), self.num_players
        boards = np.array([s.boards for s in states], dtype=np.uint64).reshape(n, p)
        movers = np.array([s.mover for s in states], dtype=np.int64)
        order = (movers[:, None] + np.arange(p)[None, :]) % p
        boards = np.take_along_axis(boards, order, axis=1)
        stones = ((boards[:, :, None] >> self._cell_bits[None, None, :]) & np.uint64(1)).astype(np.float32)
        planes = np.zeros((n, 2 * p, self.rows * self.cols), dtype=np.float32)
        planes[:, :p] = stones
        planes[np.arange(n), p + movers] = 1.0
        return planes.reshape(n, 2 * p, self.rows, self.cols)

    def symmetries(self) -> list[Symmetry]:
        transforms = [lambda x: x, lambda x: np.flip(x, -1)]
        if not self.gravity:
            transforms += [lambda x: np.flip(x, -2), lambda x: np.flip(x, (-2, -1))]
            if self.rows == self.cols:
                transforms += [
                    lambda x: np.swapaxes(x, -1, -2),
                    lambda x: np.rot90(x, 1, (-2, -1)),
                    lambda x: np.rot90(x, -1, (-2, -1)),
                    lambda x: np.flip(np.swapaxes(x, -1, -2), (-2, -1)),
                ]
        index_shape = (1, self.cols) if self.gravity else (self.rows, self.cols)
        index = np.arange(self.num_actions).reshape(index_shape)
        return [Symmetry(f, np.ascontiguousarray(f(index)).ravel()) for f in transforms]

    # --- people ------------------------------------------------------------------------------
    def render(self, state: ConnectState) -> str:
        """Seats as X, O, A, ...; an empty cell shows the number a person types for it (drop games:
        the column numbers under the board)."""
        width = 1 if self.gravity else len(str(self.num_actions))
        lines = []
        for i in range(self.rows):
            row = []
            for j in range(self.cols):
                bit = int(self._cell_bits[i * self.cols + j])
                owner = next((s for s, b in enumerate(state.boards) if (b >> bit) & 1), None)
                empty = "." if self.gravity else str(i * self.cols + j + 1)
                row.append((empty if owner is None else SEAT_SYMBOLS[owner]).rjust(width))
            lines.append(" ".join(row))
        if self.gravity:
            lines.append(" ".join(str(c + 1) for c in range(self.cols)))
        return "\n".join(lines)

    def parse_move(self, state: ConnectState, text: str) -> int:
        """Moves are 1-based: a column for gravity games (as in the Connect-4 test sets), else a cell
        numbered row by row from the top-left."""
        try:
            action = int(text.strip()) - 1
        except ValueError:
            raise IllegalMove(f"expected a number from 1 to {self.num_actions}, got {text.strip()!r}") from None
        if action not in self.legal_actions(state):
            raise IllegalMove(f"move {text.strip()} is not legal here")
        return action

    def format_move(self, action: int) -> str:
        return str(action + 1)


# The registered games (pyproject.toml's `alphazero_pipeline.games`): Petosa & Balch's four.
def tictactoe() -> ConnectGame:
    return ConnectGame("tictactoe", rows=3, cols=3, k=3, num_players=2, gravity=False)


def tictacmo() -> ConnectGame:
    return ConnectGame("tictacmo", rows=3, cols=5, k=3, num_players=3, gravity=False)


def connect4() -> ConnectGame:
    return ConnectGame("connect4", rows=6, cols=7, k=4, num_players=2, gravity=True)


def connect3x3() -> ConnectGame:
    return ConnectGame("connect3x3", rows=6, cols=7, k=3, num_players=3, gravity=True)
