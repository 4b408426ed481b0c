"""Kingdoms search has seen, kept by their bytes: what a position's planes show of each (its properties'
crowns and its open cells) and the points each domino's best placement there would add (the `fit`
planes). Search meets the same kingdoms over and over (a move changes one kingdom, a draw at a round's
end none), and analysing a kingdom (a flood fill) and placing a domino every way cost more than finding
them here: a position's encoding took 16 microseconds with them, most of it those.

The memo is direct-mapped by a hash of the kingdom's bytes (a newcomer evicts what was there) and holds
the whole kingdom as its key, so a hit is that kingdom, never a collision's. A domino's gain is found the
first time it is asked for that kingdom. A search keeps one for its life (`rows.py`), a batch of states
one for the batch (`planes.py`); its `work` holds one analysis and which entry it is of, so that the
gains of one kingdom share it.
"""

from __future__ import annotations

import numpy as np

from alphazero_games.kingdomino.rule_kernels import ANALYSIS_ROWS, analyse, best_placement, property_planes
from pipeline.plumbing.kernel_cache import kernel

ENTRIES = 1 << 14  # kingdoms kept (4-player, 5x5: about 7 MB)
DOMINOES = 49  # by number, 1-48
KEYS, HELD, CROWN_PLANES, OPEN_PLANES, GAINS, KNOWN = range(6)  # a memo's arrays
ANALYSED, PLACED = 0, 1  # `work`'s state: the entry its analysis is of (-1: none), and its squares placed


def new_memo(kingdom_bytes: int, cells: int, entries: int = ENTRIES) -> tuple:
    """An empty memo for kingdoms of `kingdom_bytes` over `cells` cells; `entries` a power of two."""
    if entries & (entries - 1):
        raise ValueError(f"memo entries: expected a power of two, got {entries}")
    return (
        np.zeros((entries, kingdom_bytes), np.int8),  # each entry's kingdom
        np.zeros(entries, np.bool_),  # whether it holds one
        np.zeros((entries, cells), np.int8),  # per cell, the crowns of its property (0: empty, the castle)
        np.zeros((entries, cells), np.int8),  # per cell, whether a square may still go there
        np.zeros((entries, DOMINOES), np.int16),  # per domino, the points its best placement adds
        np.zeros(entries, np.uint64),  # a bit per domino whose gain is known
    )


def new_work(cells: int) -> tuple:
    """Work space for `entry` and `gain`: one analysis, and its state (`ANALYSED`, `PLACED`)."""
    return np.empty((ANALYSIS_ROWS, cells), np.int64), np.array([-1, 0], np.int64)


@kernel
def _hash(kingdom):
    """FNV-1a over the kingdom's bytes."""
    h = np.uint64(0xCBF29CE484222325)
    for b in kingdom:
        h = (h ^ np.uint64(b & 0xFF)) * np.uint64(0x100000001B3)
    return h


@kernel
def entry(memo, work, kingdom, size):
    """The memo's entry of `kingdom`, filled (its planes, no gain yet) where the kingdom is new to it."""
    keys, held, crowns, opens = memo[KEYS], memo[HELD], memo[CROWN_PLANES], memo[OPEN_PLANES]
    e = np.int64(_hash(kingdom) & np.uint64(keys.shape[0] - 1))
    if held[e]:
        same = True
        for b in range(kingdom.shape[0]):
            if keys[e, b] != kingdom[b]:
                same = False
                break
        if same:
            return e
    analysis, state = work
    keys[e] = kingdom
    held[e] = True
    memo[KNOWN][e] = 0
    _, state[PLACED] = analyse(kingdom, size, analysis)
    state[ANALYSED] = e
    property_planes(kingdom, analysis, crowns[e], opens[e])
    return e


@kernel
def gain(memo, work, e, kingdom, number, size, middle, harmony):
    """The points domino `number`'s best placement adds to `kingdom`, whose entry is `e`."""
    gains, known = memo[GAINS], memo[KNOWN]
    bit = np.uint64(1) << np.uint64(number)
    if known[e] & bit:
        return gains[e, number]
    analysis, state = work
    if state[ANALYSED] != e:  # an entry is refilled only by `entry`, which analyses its newcomer
        _, state[PLACED] = analyse(kingdom, size, analysis)
        state[ANALYSED] = e
    points = best_placement(kingdom, analysis, state[PLACED], number, size, middle, harmony)[1]
    gains[e, number] = points
    known[e] |= bit
    return points
