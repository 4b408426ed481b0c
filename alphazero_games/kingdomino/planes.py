"""A Kingdomino position's network planes, each kingdom read through a memo (`memo.py`): one encoder for
the states `encode_batch` is given (`compiled.py`) and for search's rows (`rows.py`)."""

from __future__ import annotations

import numpy as np

from alphazero_games.kingdomino.memo import CROWN_PLANES, OPEN_PLANES, entry, gain, new_memo, new_work
from alphazero_games.kingdomino.rule_kernels import (
    GAIN_SLOTS,
    KING,
    ORDER,
    PLAYER_PLANES,
    gain_read,
    seat_planes,
    slot_domino,
    table_planes,
)  # fmt: skip
from pipeline.plumbing.kernel_cache import kernel

BATCH_MEMO = 64  # kingdoms kept while one batch of states is encoded


@kernel
def encode_position(kingdoms, h, features, size, middle, harmony, fit, row_length, memo, work, gains, width, out):
    """The planes (planes, cells) of the position of `kingdoms` (players, kingdom bytes) and header `h`
    into `out`, whose planes past the kingdoms' are zeroed on their first `width` cells only (`table_planes`:
    all of them, or 1 for a network that reads those planes as a vector); `gains` (players, GAIN_SLOTS) is
    work space."""
    players = kingdoms.shape[0]
    board = players * PLAYER_PLANES
    out[:board] = 0.0
    out[board:, :width] = 0.0
    gains[:] = 0
    crowns, opens = memo[CROWN_PLANES], memo[OPEN_PLANES]
    mover = h[ORDER + h[KING]]
    for seat in range(players):
        kingdom = kingdoms[seat]
        e = entry(memo, work, kingdom, size)  # read before the next seat's kingdom may take its place
        seat_planes(kingdom, crowns[e], opens[e], (seat - mover) % players, out)
        for slot in range(GAIN_SLOTS):
            if fit and gain_read(h, seat, slot):
                gains[seat, slot] = gain(memo, work, e, kingdom, slot_domino(h, slot), size, middle, harmony)
    table_planes(h, features, fit, row_length, players, gains, out, width)


@kernel
def _encode(kingdoms, headers, features, size, middle, harmony, fit, row_length, memo, work, out):
    gains = np.zeros((kingdoms.shape[1], GAIN_SLOTS), np.int64)
    for g in range(kingdoms.shape[0]):
        encode_position(
            kingdoms[g], headers[g], features, size, middle, harmony, fit, row_length, memo, work, gains,
            out.shape[2], out[g],
        )  # fmt: skip


def encode(kingdoms, headers, features, size, middle, harmony, fit, row_length, out) -> None:
    """The reference's `encode_batch` into `out` (states, planes, cells): states as the kernels hold them
    (`kingdoms` (states, players, kingdom bytes), `headers`), through a memo of the batch's own."""
    cells = out.shape[2]
    memo, work = new_memo(kingdoms.shape[2], cells, BATCH_MEMO), new_work(cells)
    _encode(kingdoms, headers, features, size, middle, harmony, fit, row_length, memo, work, out)
