"""A k-in-a-row position (`rules.py`), apart from the rules so that their compiled form (`compiled.py`)
builds it too."""

from __future__ import annotations

from typing import NamedTuple


class ConnectState(NamedTuple):
    boards: tuple[int, ...]  # one bitboard per absolute seat, Pons' column layout (`rules.py`)
    heights: tuple[int, ...]  # stones per column (used by gravity games only)
    mover: int
    ply: int
    winner: int | None
    done: bool
