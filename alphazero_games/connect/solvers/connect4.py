"""A perfect Connect-4 solver: bitboard negamax with alpha-beta, a transposition table, centre-first
move ordering refined by threats, and null-window iterative deepening on the score (Pascal Pons'
method), compiled with numba.

Scores follow the standard test sets: from the side to move, a win scores 22 minus the stones the
winner has played at the end, a draw 0, a loss the negative of the winner's count.
"""

from __future__ import annotations

import numpy as np

from pipeline.plumbing.kernel_cache import kernel

WIDTH, HEIGHT = 7, 6
CELLS = WIDTH * HEIGHT
MIN_SCORE = -CELLS // 2 + 3
BOTTOM = sum(1 << (c * (HEIGHT + 1)) for c in range(WIDTH))
BOARD = BOTTOM * ((1 << HEIGHT) - 1)
CENTRE_FIRST = np.array([3, 2, 4, 1, 5, 0, 6], dtype=np.int64)  # columns from the centre out: better cut-offs
TABLE_SIZE = (1 << 23) + 9  # a prime: keys spread over the whole table


@kernel
def top_mask(col):
    return np.uint64(1) << np.uint64((HEIGHT - 1) + col * (HEIGHT + 1))


@kernel
def bottom_mask(col):
    return np.uint64(1) << np.uint64(col * (HEIGHT + 1))


@kernel
def column_mask(col):
    return np.uint64((1 << HEIGHT) - 1) << np.uint64(col * (HEIGHT + 1))


@kernel
def popcount(m):
    count = 0
    while m:
        m &= m - np.uint64(1)
        count += 1
    return count


@kernel
def winning_cells(position, mask):
    """Empty cells (anywhere) that would complete four for the owner of `position`."""
    h = np.uint64(HEIGHT)
    r = (position << np.uint64(1)) & (position << np.uint64(2)) & (position << np.uint64(3))
    for shift in (h + np.uint64(1), h, h + np.uint64(2)):
        p = (position << shift) & (position << (np.uint64(2) * shift))
        r |= p & (position << (np.uint64(3) * shift))
        r |= p & (position >> shift)
        p = (position >> shift) & (position >> (np.uint64(2) * shift))
        r |= p & (position >> (np.uint64(3) * shift))
        r |= p & (position << shift)
    return r & (np.uint64(BOARD) ^ mask)


@kernel
def _possible(mask):
    return (mask + np.uint64(BOTTOM)) & np.uint64(BOARD)


@kernel
def _non_losing_moves(position, mask):
    possible = _possible(mask)
    opponent_wins = winning_cells(position ^ mask, mask)
    forced = possible & opponent_wins
    if forced:
        if forced & (forced - np.uint64(1)):
            return np.uint64(0)  # two threats at once: every move loses
        possible = forced
    return possible & ~(opponent_wins >> np.uint64(1))  # never play under an opponent's threat


@kernel
def _negamax(position, mask, moves, alpha, beta, keys, values):
    nxt = _non_losing_moves(position, mask)
    if nxt == 0:
        return -((CELLS - moves) // 2)
    if moves >= CELLS - 2:
        return 0
    low = -((CELLS - 2 - moves) // 2)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = (CELLS - 1 - moves) // 2
    key = position + mask
    slot = key % np.uint64(keys.shape[0])
    if keys[slot] == key:
        high = values[slot] + MIN_SCORE - 1
    if beta > high:
        beta = high
        if alpha >= beta:
            return beta
    # order: most new threats first, ties broken centre-first
    candidates = np.empty(WIDTH, dtype=np.uint64)
    scores = np.empty(WIDTH, dtype=np.int64)
    count = 0
    for i in range(WIDTH):
        move = nxt & column_mask(CENTRE_FIRST[WIDTH - 1 - i])
        if move:
            score = popcount(winning_cells(position | move, mask))
            j = count
            while j > 0 and scores[j - 1] > score:
                candidates[j], scores[j] = candidates[j - 1], scores[j - 1]
                j -= 1
            candidates[j], scores[j] = move, score
            count += 1
    for i in range(count - 1, -1, -1):
        move = candidates[i]
        child_position = position ^ mask
        child_mask = mask | move
        score = -_negamax(child_position, child_mask, moves + 1, -beta, -alpha, keys, values)
        if score >= beta:
            return score
        if score > alpha:
            alpha = score
    keys[slot] = key
    values[slot] = alpha - MIN_SCORE + 1
    return alpha


@kernel
def _solve(position, mask, moves, weak, keys, values):
    for col in range(WIDTH):
        if (mask & top_mask(col)) == 0:
            move = (mask + bottom_mask(col)) & column_mask(col)
            if winning_cells(position, mask) & move:
                return (CELLS + 1 - moves) // 2
    low, high = -((CELLS - moves) // 2), (CELLS + 1 - moves) // 2
    if weak:
        low, high = -1, 1
    while low < high:
        mid = low + (high - low) // 2
        if mid <= 0 and -(-low // 2) < mid:  # halves truncate towards zero, as in the C++ original
            mid = -(-low // 2)
        elif mid >= 0 and high // 2 > mid:
            mid = high // 2
        result = _negamax(position, mask, moves, mid, mid + 1, keys, values)
        if result <= mid:
            high = result
        else:
            low = result
    return low


class Connect4Solver:
    """Solves positions given as strings of 1-based columns played from the empty board."""

    def __init__(self, table_size: int = TABLE_SIZE):
        self.keys = np.zeros(table_size, dtype=np.uint64)
        self.values = np.zeros(table_size, dtype=np.int8)

    @staticmethod
    def parse(moves: str) -> tuple[int, int, int]:
        """(position of the side to move, mask, stones played); ValueError on a bad or finished line."""
        position = mask = 0
        for n, ch in enumerate(moves.strip()):
            if not ch.isdigit() or not 1 <= int(ch) <= WIDTH:
                raise ValueError(f"move {n + 1}: expected a column 1-{WIDTH}, got {ch!r}")
            col = int(ch) - 1
            if mask & (1 << ((HEIGHT - 1) + col * (HEIGHT + 1))):
                raise ValueError(f"move {n + 1}: column {col + 1} is full")
            move = (mask + (1 << (col * (HEIGHT + 1)))) & (((1 << HEIGHT) - 1) << (col * (HEIGHT + 1)))
            if int(winning_cells(np.uint64(position), np.uint64(mask))) & move:
                raise ValueError(f"move {n + 1}: the game is already won there")
            position ^= mask
            mask |= move
        return position, mask, len(moves.strip())

    def solve(self, moves: str, weak: bool = False) -> int:
        """The exact score, or with `weak` only its sign (win 1, draw 0, loss -1): much faster."""
        position, mask, count = self.parse(moves)
        if count == CELLS:
            return 0
        score = int(_solve(np.uint64(position), np.uint64(mask), count, weak, self.keys, self.values))
        return int(np.sign(score)) if weak else score

    def column_scores(self, moves: str, weak: bool = False) -> list[int]:
        """Score of playing each column (from the side to move), -1000 for a full column."""
        return self.position_column_scores(*self.parse(moves), weak)

    def position_column_scores(self, position: int, mask: int, count: int, weak: bool = False) -> list[int]:
        """`column_scores` of a position given as bitboards: the stones of the side to move, all
        stones, and how many there are (the layout of `ConnectGame("connect4")`)."""
        return [self._column_score(position, mask, count, col, weak) for col in range(WIDTH)]

    def column_score(self, moves: str, column: int, weak: bool = True) -> int:
        """The score of playing one 0-based `column` (win/draw/loss sign by default), -1000 if full."""
        return self._column_score(*self.parse(moves), column, weak)

    def _column_score(self, position: int, mask: int, count: int, col: int, weak: bool) -> int:
        if mask & (1 << ((HEIGHT - 1) + col * (HEIGHT + 1))):
            return -1000
        move = (mask + (1 << (col * (HEIGHT + 1)))) & (((1 << HEIGHT) - 1) << (col * (HEIGHT + 1)))
        if int(winning_cells(np.uint64(position), np.uint64(mask))) & move:
            return 1 if weak else (CELLS + 1 - count) // 2
        if count + 1 == CELLS:
            return 0
        # After the move the opponent is to move: its stones are the others, `position ^ mask`.
        score = int(_solve(np.uint64(position ^ mask), np.uint64(mask | move), count + 1, weak, self.keys, self.values))
        return -(int(np.sign(score)) if weak else score)
