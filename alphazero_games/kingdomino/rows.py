"""Kingdomino's rules compiled over int64 rows (`pipeline/games/compiled.py`), for search's compiled
expansion: one row a state, on `rule_kernels.py`'s kernels.

A row holds the kernels' header (`rule_kernels.HEADER` ints), the ply, the deck's dominoes (one byte
each, in the deck's order) and each seat's kingdom as the kernels' int8 row, both bytes of the row seen
as int8. Drawing a row of dominoes is the game's one chance move: `chance` names the picks that end a
round with dominoes left to draw, and `draw_keys` draws the next row from the tree's generator (lent as a
stream, `pipeline/games/pcg64.py`) as the Python rules' `step` does. The variant's constants travel as
`shape` (below).
"""

from __future__ import annotations

import numpy as np

from alphazero_games.kingdomino.memo import ENTRIES, new_memo, new_work
from alphazero_games.kingdomino.planes import encode_position
from alphazero_games.kingdomino.rule_kernels import (
    DECK,
    DONE,
    GAIN_SLOTS,
    HEADER,
    KING,
    NEXT_COUNT,
    NEXT_OWNERS,
    NEXT_ROW,
    ORDER,
    PLACING,
    ROW,
    ROW_COUNT,
    SEED_BOUND,
    place,
    placement_mask,
)  # fmt: skip
from alphazero_games.kingdomino.rules import _FEATURES, Kingdom, KingdominoState, _draw
from pipeline.games.compiled import CompiledRules
from pipeline.games.pcg64 import bounded, choice
from pipeline.plumbing.kernel_cache import kernel

SIZE, MIDDLE, HARMONY, FIT, ROW_LENGTH, PLAYERS, FIRST_PICK, DISCARD, KINGDOM_BYTES = range(9)  # `shape`
PLY = HEADER  # after the header, the ply
DECK_AT = HEADER + 1  # then the deck, one byte a domino, in DECK_WORDS int64
DECK_WORDS = 6  # 48 dominoes at most
KINGDOMS_AT = DECK_AT + DECK_WORDS  # then the kingdoms, KINGDOM_BYTES each, seat by seat
FEATURES = _FEATURES  # the dominoes' 14 numbers, a constant of the compiled encoder


@kernel
def _kingdom(shape, row, seat):
    """Seat `seat`'s kingdom in `row`: the kernels' int8 row, a view that `place` writes through."""
    start = 8 * KINGDOMS_AT + seat * shape[KINGDOM_BYTES]
    return row.view(np.int8)[start : start + shape[KINGDOM_BYTES]]


@kernel
def _kingdoms(shape, row):
    """Every seat's kingdom in `row`, (players, KINGDOM_BYTES), a view."""
    start = 8 * KINGDOMS_AT
    return row.view(np.int8)[start : start + shape[PLAYERS] * shape[KINGDOM_BYTES]].reshape(shape[PLAYERS], -1)


@kernel
def _step(shape, parent, action, out):
    """`rules.py`'s `_apply` of a move that draws nothing: a placement or discard, or a pick (the round's
    last only when the deck is empty)."""
    out[:] = parent
    king, row_length = out[KING], shape[ROW_LENGTH]
    mover = out[ORDER + king]
    out[PLY] += 1
    if out[PLACING]:
        if action != shape[DISCARD]:
            place(_kingdom(shape, out, mover), out[ROW + king], action, 2 * shape[SIZE] - 1)
        if out[NEXT_COUNT] > 0:
            out[PLACING] = 0
        elif king + 1 == row_length:
            out[DONE] = 1
        else:
            out[KING] = king + 1
        return
    out[NEXT_OWNERS + action - shape[FIRST_PICK]] = mover
    if king + 1 < row_length:
        out[KING] = king + 1
        out[PLACING] = out[ROW_COUNT] > 0
        return
    for i in range(4):  # the last round begins: the next row becomes this one, and none follows it
        out[ROW + i], out[ORDER + i] = out[NEXT_ROW + i], out[NEXT_OWNERS + i]
        out[NEXT_ROW + i], out[NEXT_OWNERS + i] = 0, 0
    out[ROW_COUNT], out[NEXT_COUNT] = out[NEXT_COUNT], 0
    out[KING], out[PLACING] = 0, 1


@kernel
def step(shape, rows, parents, actions, children, count):
    for i in range(count):
        _step(shape, rows[parents[i]], actions[i], rows[children[i]])


@kernel
def outcome(shape, rows, parents, actions, keys, children, count):
    """The round's last pick with the next row drawn: `keys[i]`, its dominoes sorted, leave the deck."""
    for i in range(count):
        out = rows[children[i]]
        _step(shape, rows[parents[i]], actions[i], out)
        deck = out.view(np.int8)[8 * DECK_AT : 8 * (DECK_AT + DECK_WORDS)]
        left = 0
        for k in range(out[DECK]):
            if not (keys[i] == deck[k]).any():
                deck[left] = deck[k]
                left += 1
        deck[left:] = 0
        out[DECK] = left
        for slot in range(shape[ROW_LENGTH]):
            out[NEXT_ROW + slot], out[NEXT_OWNERS + slot] = keys[i, slot], -1
        out[NEXT_COUNT] = shape[ROW_LENGTH]


@kernel
def chance(shape, rows, nodes, actions, count, out):
    """`out[i]`: whether `actions[i]` at `nodes[i]` draws the next row (the round's last pick, dominoes left)."""
    for i in range(count):
        row = rows[nodes[i]]
        out[i] = not row[PLACING] and row[KING] + 1 == shape[ROW_LENGTH] and row[DECK] > 0


@kernel
def draw_keys(shape, rows, parents, streams, trees, count, keys):
    """`_Rows.draw` compiled: `keys[i]`, the row drawn from the deck at `parents[i]` with stream `trees[i]`
    (`pipeline/games/pcg64.py`), sorted."""
    length = shape[ROW_LENGTH]
    picks = np.empty(length, np.int64)
    for i in range(count):
        row = rows[parents[i]]
        deck = row.view(np.int8)[8 * DECK_AT : 8 * (DECK_AT + DECK_WORDS)]
        choice(streams[trees[i]], row[DECK], length, picks)
        for slot in range(length):
            keys[i, slot] = deck[picks[slot]]
        keys[i, :length] = np.sort(keys[i, :length])


@kernel
def playout_seeds(streams, trees, count, out):
    """`out[i]`: the seed `CompiledKingdomino.play_out` draws for a playout (`integers(SEED_BOUND)`) from
    stream `streams[trees[i]]`, compiled."""
    for i in range(count):
        out[i] = np.int64(bounded(streams[trees[i]], SEED_BOUND - 1))


@kernel
def mover(shape, rows, nodes, count, out):
    for i in range(count):
        row = rows[nodes[i]]
        out[i] = -1 if row[DONE] else row[ORDER + row[KING]]


@kernel
def legal(shape, rows, nodes, count, out):
    for i in range(count):
        row, mask = rows[nodes[i]], out[nodes[i]]
        mask[:] = False
        if row[DONE]:
            continue
        king = row[KING]
        if row[PLACING]:
            kingdom = _kingdom(shape, row, row[ORDER + king])
            if placement_mask(kingdom, row[ROW + king], shape[SIZE], mask) == 0:
                mask[shape[DISCARD]] = True
            continue
        for slot in range(row[NEXT_COUNT]):
            mask[shape[FIRST_PICK] + slot] = row[NEXT_OWNERS + slot] < 0


@kernel
def encode(shape, rows, nodes, count, out, memo, work, width):
    """The planes of `rows[nodes[:count]]` (`planes.py`'s `encode_position`), the memo's kingdoms kept across
    calls, the constant planes written on their first `width` cells."""
    cells = (2 * shape[SIZE] - 1) ** 2
    gains = np.zeros((shape[PLAYERS], GAIN_SLOTS), np.int64)
    for i in range(count):
        row = rows[nodes[i]]
        encode_position(
            _kingdoms(shape, row), row, FEATURES, shape[SIZE], shape[MIDDLE], shape[HARMONY], shape[FIT],
            shape[ROW_LENGTH], memo, work, gains, width, out[i].reshape(out.shape[1], cells),
        )  # fmt: skip


class _Rows:
    """A game's (`compiled.py`'s `CompiledKingdomino`) states as rows and back."""

    def __init__(self, game):
        self.game = game
        self.kingdom_bytes = 2 * game.grid * game.grid + 4
        self.width = KINGDOMS_AT + -(-game.num_players * self.kingdom_bytes // 8)
        codes = np.array([7, 1, 2, 3, 4, 5, 6])  # the castle's code, then the terrains': `Kingdom.lands`' order
        self._codes = codes[:, None]
        self._bits = game._cell_bit_array  # each cell's bit in a bitboard
        self._board_bytes = game._bytes

    def to_row(self, state: KingdominoState) -> np.ndarray:
        game, row = self.game, np.zeros(self.width, dtype=np.int64)
        row[:HEADER] = game.header(state)
        row[PLY] = state.ply
        data = row.view(np.int8)
        data[8 * DECK_AT : 8 * DECK_AT + len(state.deck)] = state.deck
        start = 8 * KINGDOMS_AT
        for kingdom in state.kingdoms:
            data[start : start + self.kingdom_bytes] = game.kingdom_row(kingdom)
            start += self.kingdom_bytes
        return row

    def draw(self, row: np.ndarray, rng: np.random.Generator) -> tuple[int, ...]:
        """The next row as the rules' `step` draws it from `rng` (`rules.py`'s `_draw`), sorted."""
        deck = row.view(np.int8)[8 * DECK_AT : 8 * DECK_AT + int(row[DECK])].tolist()
        return tuple(sorted(_draw(deck, self.game.row_length, rng)))

    def playouts(self, rows: np.ndarray | list, rngs: list) -> tuple[np.ndarray, np.ndarray]:
        """The game's `greedy_outcomes` of the rows' states, read straight off the rows."""
        return self.game.play_out(*self._playout_arrays(rows), rngs)

    def playouts_from_streams(self, streams: np.ndarray, rows: np.ndarray | list, trees: list[int]):
        """`playouts` with each playout's seed drawn from stream `streams[trees[i]]`, compiled."""
        seeds = np.empty(len(trees), dtype=np.int64)
        playout_seeds(streams, np.asarray(trees, dtype=np.int64), len(trees), seeds)
        return self.game.play_out_seeded(*self._playout_arrays(rows), seeds)

    def _playout_arrays(self, rows: np.ndarray | list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows' kingdoms (a copy the playouts lay dominoes in), headers and decks."""
        rows = np.asarray(rows)
        data, seats = rows.view(np.int8), self.game.num_players
        start = 8 * KINGDOMS_AT
        kingdoms = data[:, start : start + seats * self.kingdom_bytes].reshape(len(rows), seats, -1).copy()
        decks = data[:, 8 * DECK_AT : 8 * (DECK_AT + DECK_WORDS)].astype(np.int64)
        return kingdoms, np.ascontiguousarray(rows[:, :HEADER]), decks

    def from_row(self, row: np.ndarray) -> KingdominoState:
        header, data, length = row[:HEADER].tolist(), row.view(np.int8), self.game.row_length
        start, seats = 8 * KINGDOMS_AT, range(self.game.num_players)
        kingdoms = tuple(
            self._kingdom(data[start + seat * self.kingdom_bytes : start + (seat + 1) * self.kingdom_bytes])
            for seat in seats
        )
        row_count, next_count = header[ROW_COUNT], header[NEXT_COUNT]
        return KingdominoState(
            kingdoms=kingdoms,
            row=tuple(header[ROW : ROW + row_count]),
            order=tuple(header[ORDER : ORDER + length]),
            next_row=tuple(header[NEXT_ROW : NEXT_ROW + next_count]),
            next_owners=tuple(header[NEXT_OWNERS : NEXT_OWNERS + next_count]),
            deck=tuple(data[8 * DECK_AT : 8 * DECK_AT + header[DECK]].tolist()),
            king=header[KING],
            placing=bool(header[PLACING]),
            ply=int(row[PLY]),
            done=bool(header[DONE]),
        )

    def _kingdom(self, grid: np.ndarray) -> Kingdom:
        """A kernels' kingdom row as the reference's bitboards (`rule_kernels.unpack_kingdom` undone)."""
        cells = len(self._bits)
        terrain, crowns = grid[:cells], grid[cells : 2 * cells]
        boards = np.zeros((9, 8 * self._board_bytes), dtype=np.uint8)
        boards[:7, self._bits] = terrain[None, :] == self._codes
        boards[7, self._bits], boards[8, self._bits] = crowns & 1, crowns >> 1 & 1
        packed = np.packbits(boards, axis=1, bitorder="little")
        castle, *lands, low, high = (int.from_bytes(board.tobytes(), "little") for board in packed)
        return Kingdom((castle, *lands), low, high, tuple(grid[2 * cells : 2 * cells + 4].tolist()))


def compiled_rules(game, memo_entries: int = ENTRIES) -> CompiledRules:
    """`game`'s (a `CompiledKingdomino`) rules over rows, with a memo of `memo_entries` kingdoms."""
    rows = _Rows(game)
    cells = game.grid * game.grid
    memo, work = new_memo(rows.kingdom_bytes, cells, memo_entries), new_work(cells)

    def encode_rows(shape, rows, nodes, count, out):
        encode(shape, rows, nodes, count, out, memo, work, cells)

    def encode_vectors(shape, rows, nodes, count, out):
        encode(shape, rows, nodes, count, out, memo, work, 1)

    shape = np.array(
        [game.size, game.middle, game.harmony, game.fit, game.row_length, game.num_players, game.first_pick,
         game.discard, rows.kingdom_bytes],
        dtype=np.int64,
    )  # fmt: skip
    return CompiledRules(
        rows.width,
        shape,
        rows.to_row,
        rows.from_row,
        step,
        mover,
        legal,
        encode_rows,
        chance,
        rows.draw,
        outcome,
        rows.playouts,
        encode_vectors,
        game.row_length,
        draw_keys,
        rows.playouts_from_streams,
    )
