"""Kingdomino's rules compiled (numba) over arrays, for the hot paths: legal placements, the greedy
player, whole greedy playouts, the final standings and the network's input planes. `rules.py` is
the reference they are tested against (tests/test_kingdomino_compiled.py); `compiled.py` is
the game built on them.

A kingdom here is one int8 row of `2 * cells + 4`: each cell's terrain code (0 empty, 1..6 the
terrains, 7 the castle), each cell's crowns, then its box (top, bottom, left, right). Cells run
row-major over the (2 * size - 1)^2 grid; a placement is cell * 4 + direction (right, down, left, up),
as in the reference.
"""

from __future__ import annotations

import numpy as np

from alphazero_games.kingdomino.rules import CASTLE, DOMINO_CROWNS, DOMINO_TERRAINS
from pipeline.plumbing.kernel_cache import kernel

TABLE_TERRAINS = DOMINO_TERRAINS.astype(np.int64)
TABLE_CROWNS = DOMINO_CROWNS.astype(np.int64)
PLAYER_PLANES = 9  # per seat: 6 terrains, crowns, property crowns, open cells
FEATURES = 14  # per domino: each half's terrain one-hot and crowns
FREE = -1


def _neighbour_table(grid: int, cells: int) -> np.ndarray:
    """Per cell the cell right, down, left and up of it, -1 off the grid; rows past grid^2 unused."""
    table = np.full((cells, 4), -1, dtype=np.int64)
    for cell in range(grid * grid):
        row, column = divmod(cell, grid)
        for direction, (dr, dc) in enumerate(((0, 1), (1, 0), (0, -1), (-1, 0))):
            if 0 <= row + dr < grid and 0 <= column + dc < grid:
                table[cell, direction] = cell + dr * grid + dc
    return table


NEIGHBOURS = np.stack([_neighbour_table(9, 169), _neighbour_table(13, 169)])  # size 5, size 7


@kernel
def _neighbour(cell, direction, grid):
    """The cell next to `cell` in `direction` (right, down, left, up), -1 off the grid."""
    return NEIGHBOURS[0 if grid == 9 else 1, cell, direction]


@kernel
def label_properties(kingdom, grid, labels, squares, crowns, stack):
    """Flood-fill the properties: `labels[cell]` its property (-1 for empty cells and the castle),
    `squares` and `crowns` per property (`stack`: work space of a cell each). Returns how many."""
    cells = grid * grid
    labels[:] = -1
    count = 0
    for start in range(cells):
        terrain = kingdom[start]
        if terrain == 0 or terrain == CASTLE or labels[start] >= 0:
            continue
        labels[start] = count
        size, crown, top = 0, 0, 1
        stack[0] = start
        while top > 0:
            top -= 1
            cell = stack[top]
            size += 1
            crown += kingdom[cells + cell]
            for direction in range(4):
                near = _neighbour(cell, direction, grid)
                if near >= 0 and labels[near] < 0 and kingdom[near] == terrain:
                    labels[near] = count
                    stack[top] = near
                    top += 1
        squares[count] = size
        crowns[count] = crown
        count += 1
    return count


@kernel
def unpack_kingdom(words, box, grid, out):
    """The kernels' row of a reference kingdom into `out`: `words` are its 9 bitboards (the castle, the
    six terrains, crowns' low and high bits; a spare bit ends each grid row), 3 little-endian 64-bit
    words each (the 7 x 7 kingdom's grid has 182 bits)."""
    cells = grid * grid
    for cell in range(cells):
        bit = cell + cell // grid  # the row's spare bit
        word, offset = bit >> 6, np.uint64(bit & 63)
        out[cell] = 0
        for land in range(7):
            if words[3 * land + word] >> offset & np.uint64(1):
                out[cell] = CASTLE if land == 0 else land
        low, high = words[21 + word] >> offset & np.uint64(1), words[24 + word] >> offset & np.uint64(1)
        out[cells + cell] = low + 2 * high
    out[2 * cells : 2 * cells + 4] = box


# Rows of an analysis (`analyse`): per cell its property, per property its squares and crowns, per cell
# whether it is open, then per terrain 1..6 whether the cell touches that terrain or the castle.
LABELS, SQUARES, CROWNS, OPEN, TOUCH, STACK = 0, 1, 2, 3, 3, 10  # TOUCH + terrain; STACK: flood-fill work
ANALYSIS_ROWS = 11


@kernel
def analyse(kingdom, size, analysis):
    """Fill `analysis` (ANALYSIS_ROWS, cells) for `kingdom`: what every placement of every domino is
    judged from, so a king weighing four dominoes reads its kingdom once. Returns (properties, squares
    placed)."""
    grid = 2 * size - 1
    cells = grid * grid
    labels, squares, crowns = analysis[LABELS], analysis[SQUARES], analysis[CROWNS]
    count = label_properties(kingdom, grid, labels, squares, crowns, analysis[STACK])
    placed = 0
    for k in range(count):
        placed += squares[k]
    analysis[TOUCH + 1 : TOUCH + 7] = 0
    box, reach = 2 * cells, size - 1
    top, bottom, left, right = (
        kingdom[box] + reach,
        kingdom[box + 1] - reach,
        kingdom[box + 2] + reach,
        kingdom[box + 3] - reach,
    )
    for cell in range(cells):
        row, column = cell // grid, cell - (cell // grid) * grid
        terrain = kingdom[cell]
        analysis[OPEN, cell] = terrain == 0 and bottom <= row <= top and right <= column <= left
        if terrain == 0:
            continue
        for direction in range(4):
            near = _neighbour(cell, direction, grid)
            if near < 0:
                continue
            if terrain == CASTLE:
                analysis[TOUCH + 1 :, near] = 1
            else:
                analysis[TOUCH + terrain, near] = 1
    return count, placed


@kernel
def _joined(kingdom, analysis, cell_a, cell_b, terrain, new_squares, new_crowns, grid):
    """Points added by `new_squares` squares of `terrain` with `new_crowns` crowns at `cell_a` (and
    `cell_b`, unless -1), merging every property of that terrain next to them, each once (`seen`: a
    bit per property; a kingdom holds at most 48 squares, so fewer than 64 properties)."""
    before, seen = 0, 0
    for j in range(8):
        cell = cell_a if j < 4 else cell_b
        near = _neighbour(cell, j % 4, grid) if cell >= 0 else -1
        if near < 0 or kingdom[near] != terrain:
            continue
        label = analysis[LABELS, near]
        if not seen >> label & 1:
            seen |= 1 << label
            squares, crowns = analysis[SQUARES, label], analysis[CROWNS, label]
            new_squares += squares
            new_crowns += crowns
            before += squares * crowns
    return new_squares * new_crowns - before


@kernel
def _bonus(top, bottom, left, right, placed, size, middle, harmony):
    centre = size - 1
    bonus = 0
    if middle and top + bottom == 2 * centre and left + right == 2 * centre:
        bonus += 10
    if harmony and placed + 1 == size * size:  # the castle counts as a square
        bonus += 5
    return bonus


@kernel
def placement_mask(kingdom, number, size, mask):
    """Set `mask[action]` for each of domino `number`'s legal placements; returns how many (0: discard)."""
    grid = 2 * size - 1
    analysis = np.empty((ANALYSIS_ROWS, grid * grid), dtype=np.int64)
    analyse(kingdom, size, analysis)
    terrain_a, terrain_b = TABLE_TERRAINS[number, 0], TABLE_TERRAINS[number, 1]
    count = 0
    for cell in range(grid * grid):
        if not analysis[OPEN, cell]:
            continue
        touches = analysis[TOUCH + terrain_a, cell]
        for direction in range(4):
            other = _neighbour(cell, direction, grid)
            if other >= 0 and analysis[OPEN, other] and (touches or analysis[TOUCH + terrain_b, other]):
                mask[4 * cell + direction] = True
                count += 1
    return count


@kernel
def best_placement(kingdom, analysis, placed, number, size, middle, harmony):
    """(action, points it adds) of the placement that leaves the most points, the first of equals;
    (-1, 0) when nothing fits (a discard). The reference's `_placement_gain`, on `analyse`'s view."""
    grid = 2 * size - 1
    box = 2 * grid * grid
    terrain_a, terrain_b = TABLE_TERRAINS[number, 0], TABLE_TERRAINS[number, 1]
    crowns_a, crowns_b = TABLE_CROWNS[number, 0], TABLE_CROWNS[number, 1]
    top, bottom, left, right = kingdom[box], kingdom[box + 1], kingdom[box + 2], kingdom[box + 3]
    bonuses = middle or harmony
    bonus_now = _bonus(top, bottom, left, right, placed, size, middle, harmony) if bonuses else 0
    best_action, best = -1, 0
    reach = size - 1
    for row in range(bottom - reach, top + reach + 1):  # the window where squares may still go
        for first in range(row * grid + right - reach, row * grid + left + reach + 1):
            if not analysis[OPEN, first]:
                continue
            touches = analysis[TOUCH + terrain_a, first]
            for direction in range(4):
                second = _neighbour(first, direction, grid)
                if second < 0 or not analysis[OPEN, second] or not (touches or analysis[TOUCH + terrain_b, second]):
                    continue
                if terrain_a == terrain_b:
                    gain = _joined(kingdom, analysis, first, second, terrain_a, 2, crowns_a + crowns_b, grid)
                else:
                    gain = _joined(kingdom, analysis, first, -1, terrain_a, 1, crowns_a, grid)
                    gain += _joined(kingdom, analysis, second, -1, terrain_b, 1, crowns_b, grid)
                if bonuses:
                    row_a, row_b, column_a, column_b = first // grid, second // grid, first % grid, second % grid
                    gain += (
                        _bonus(
                            min(top, row_a, row_b), max(bottom, row_a, row_b),
                            min(left, column_a, column_b), max(right, column_a, column_b),
                            placed + 2, size, middle, harmony,
                        )
                        - bonus_now
                    )  # fmt: skip
                if best_action < 0 or gain > best:
                    best_action, best = 4 * first + direction, gain
    return best_action, best


@kernel
def place(kingdom, number, action, grid):
    """Lay domino `number` as placement `action`, growing the box."""
    cells = grid * grid
    first = action >> 2
    second = _neighbour(first, action & 3, grid)
    box = 2 * cells
    for half, cell in ((0, first), (1, second)):
        kingdom[cell] = TABLE_TERRAINS[number, half]
        kingdom[cells + cell] = TABLE_CROWNS[number, half]
        row, column = cell // grid, cell % grid
        kingdom[box] = min(kingdom[box], row)
        kingdom[box + 1] = max(kingdom[box + 1], row)
        kingdom[box + 2] = min(kingdom[box + 2], column)
        kingdom[box + 3] = max(kingdom[box + 3], column)


@kernel
def rank(kingdom, analysis, count, placed, size, middle, harmony):
    """(points, largest property, crowns) on `analyse`'s view: what the final standings compare."""
    points, largest, crown_total = 0, 0, 0
    for k in range(count):
        points += analysis[SQUARES, k] * analysis[CROWNS, k]
        largest = max(largest, analysis[SQUARES, k])
        crown_total += analysis[CROWNS, k]
    box = 2 * (2 * size - 1) ** 2
    points += _bonus(kingdom[box], kingdom[box + 1], kingdom[box + 2], kingdom[box + 3], placed, size, middle, harmony)
    return points, largest, crown_total


@kernel
def ranks(kingdoms, size, middle, harmony, out):
    """`rank` of each kingdom of (kingdoms, row) into `out` (kingdoms, 3)."""
    analysis = np.empty((ANALYSIS_ROWS, (2 * size - 1) ** 2), dtype=np.int64)
    for k in range(kingdoms.shape[0]):
        count, placed = analyse(kingdoms[k], size, analysis)
        out[k] = rank(kingdoms[k], analysis, count, placed, size, middle, harmony)


@kernel
def _splitmix(state):
    """splitmix64: the next state and a 64-bit output (a playout's own stream, seeded once from the
    tree's generator, so draws cost no Python call)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@kernel
def _shuffle(deck, seed):
    """Fisher-Yates over `deck` in place from `seed`; a negative seed keeps the order (the
    reference's draws without a generator take the deck's front)."""
    if seed < 0:
        return
    state = np.uint64(seed)
    for i in range(len(deck) - 1, 0, -1):
        state, bits = _splitmix(state)
        j = int((bits >> np.uint64(11)) * (1.0 / 9007199254740992.0) * (i + 1))
        deck[i], deck[j] = deck[j], deck[i]


# A state's header, one int row: the row the kings sit on and its length, their order, the next row and
# its length, its owners, the acting king, placing (1) or picking (0), done, dominoes left in the deck.
ROW, ROW_COUNT, ORDER, NEXT_ROW, NEXT_COUNT, NEXT_OWNERS, KING, PLACING, DONE, DECK = 0, 4, 5, 9, 13, 14, 18, 19, 20, 21
HEADER = 22


@kernel
def greedy_pick(kingdom, analysis, placed, next_row, next_owners, next_count, size, middle, harmony):
    """(slot, its domino's best placement) of the free slot whose domino's best placement in `kingdom`
    adds most, the lowest of equals."""
    best_slot, best_action, best = -1, -1, 0
    for slot in range(next_count):
        if next_owners[slot] == FREE:
            action, gain = best_placement(kingdom, analysis, placed, next_row[slot], size, middle, harmony)
            if best_slot < 0 or gain > best:
                best_slot, best_action, best = slot, action, gain
    return best_slot, best_action


@kernel
def greedy_placement(kingdom, number, size, middle, harmony):
    """The player-greedy placement of domino `number` in `kingdom`, -1 for a discard."""
    analysis = np.empty((ANALYSIS_ROWS, (2 * size - 1) ** 2), dtype=np.int64)
    _, placed = analyse(kingdom, size, analysis)
    return best_placement(kingdom, analysis, placed, number, size, middle, harmony)[0]


@kernel
def greedy_slot(kingdom, next_row, next_owners, size, middle, harmony):
    """The player-greedy pick for `kingdom` from the next row (`next_owners`: FREE where no king sits)."""
    analysis = np.empty((ANALYSIS_ROWS, (2 * size - 1) ** 2), dtype=np.int64)
    _, placed = analyse(kingdom, size, analysis)
    return greedy_pick(kingdom, analysis, placed, next_row, next_owners, len(next_row), size, middle, harmony)[0]


@kernel
def standings(ranks, out):
    """`out[g, p]` (float32): seat p's pairwise standing in game g against every other seat, by its
    (points, largest property, crowns) in `ranks` (games, players, 3): a point per seat behind it, half
    per tie, scaled to [-1, 1] (`pipeline/games/values.py`'s `pairwise_points`, compiled: the same floats)."""
    players = ranks.shape[1]
    for g in range(ranks.shape[0]):
        for p in range(players):
            mine = (ranks[g, p, 0] * 64 + ranks[g, p, 1]) * 64 + ranks[g, p, 2]  # each is below 64 but points
            ahead = 0
            for q in range(players):
                theirs = (ranks[g, q, 0] * 64 + ranks[g, q, 1]) * 64 + ranks[g, q, 2]
                ahead += (mine > theirs) - (mine < theirs)
            points = 0.5 * ahead + 0.5 * (players - 1)
            out[g, p] = np.float32(2.0 * points / (players - 1) - 1.0)


SEED_BOUND = 1 << 62  # a playout's seed is drawn below this, one number from its tree's generator


@kernel
def greedy_playouts(kingdoms, headers, decks, seeds, size, middle, harmony, row_length, ranks_out):
    """Play each game to its end by the greedy move for every seat; write each seat's (points,
    largest property, crowns) into `ranks_out` (games, players, 3).

    `kingdoms` (games, players, row) are changed in place; `headers` (games, HEADER) as above;
    `decks` (games, 48): the dominoes not drawn yet, first `headers[:, DECK]` of each row, shuffled by
    `seeds` (negative: drawn from the front, as the reference's draws without a generator), then
    drawn a row at a time. Each seat's kingdom is analysed once after each change, and a king places
    where it planned at its pick when its kingdom has not changed since."""
    games, players = kingdoms.shape[0], kingdoms.shape[1]
    grid = 2 * size - 1
    analyses = np.empty((players, ANALYSIS_ROWS, grid * grid), dtype=np.int64)
    counts, placed, fresh = np.zeros(players, np.int64), np.zeros(players, np.int64), np.zeros(players, np.bool_)
    versions = np.zeros(players, np.int64)  # placements made in each seat's kingdom
    plans, plan_versions = np.full(4, -2, np.int64), np.full(4, -1, np.int64)  # per slot of the row: placement
    for g in range(games):
        h = headers[g]
        row, order = h[ROW : ROW + 4].copy(), h[ORDER : ORDER + 4].copy()
        next_row, next_owners = h[NEXT_ROW : NEXT_ROW + 4].copy(), h[NEXT_OWNERS : NEXT_OWNERS + 4].copy()
        row_count, next_count, king, placing, done = h[ROW_COUNT], h[NEXT_COUNT], h[KING], h[PLACING], h[DONE]
        deck = decks[g, : h[DECK]].copy()
        _shuffle(deck, seeds[g])
        drawn = 0
        fresh[:] = False
        plan_versions[:] = -1
        next_plans, next_plan_versions = plans.copy(), plan_versions.copy()
        while not done:
            seat = order[king]
            kingdom, analysis = kingdoms[g, seat], analyses[seat]
            if not fresh[seat]:
                counts[seat], placed[seat] = analyse(kingdom, size, analysis)
                fresh[seat] = True
            if placing:
                if plan_versions[king] == versions[seat]:
                    action = plans[king]
                else:
                    action = best_placement(kingdom, analysis, placed[seat], row[king], size, middle, harmony)[0]
                if action >= 0:
                    place(kingdom, row[king], action, grid)
                    fresh[seat] = False
                    versions[seat] += 1
                if next_count > 0:
                    placing = False
                elif king + 1 == row_length:
                    done = True
                else:
                    king += 1
                continue
            slot, action = greedy_pick(
                kingdom, analysis, placed[seat], next_row, next_owners, next_count, size, middle, harmony
            )  # fmt: skip
            next_owners[slot] = seat
            next_plans[slot], next_plan_versions[slot] = action, versions[seat]
            if king + 1 < row_length:
                king += 1
                placing = row_count > 0
                continue
            row[:], order[:], row_count = next_row, next_owners, next_count
            plans[:], plan_versions[:] = next_plans, next_plan_versions
            if drawn < len(deck):
                next_row[:row_length] = np.sort(deck[drawn : drawn + row_length])
                next_count = row_length
                drawn += row_length
            else:
                next_count = 0
            next_owners[:] = FREE
            king, placing = 0, True
        for seat in range(players):
            if not fresh[seat]:
                counts[seat], placed[seat] = analyse(kingdoms[g, seat], size, analyses[seat])
            ranks_out[g, seat] = rank(
                kingdoms[g, seat], analyses[seat], counts[seat], placed[seat], size, middle, harmony
            )


# The gains the planes read with `fit`: per seat, the points its kingdom's best placement of each domino
# would add, for the row's slots (0-3) and the next row's (4-7).
GAIN_SLOTS = 8


@kernel
def gain_read(h, seat, slot):
    """Whether the planes read `seat`'s gain for `slot`: a free domino of the next row for every seat, and
    a domino a seat holds and has yet to place for that seat."""
    if h[DONE]:
        return False
    if slot < 4:
        king = h[KING]
        return slot < h[ROW_COUNT] and h[ORDER + slot] == seat and (slot > king or (slot == king and h[PLACING]))
    owner = h[NEXT_OWNERS + slot - 4]
    return slot - 4 < h[NEXT_COUNT] and (owner == FREE or owner == seat)


@kernel
def slot_domino(h, slot):
    return h[ROW + slot] if slot < 4 else h[NEXT_ROW + slot - 4]


@kernel
def property_planes(kingdom, analysis, crowns, opens):
    """From `analyse`'s view: per cell the crowns of its property (0 where empty, the castle) into
    `crowns`, and whether a square may still go there into `opens`."""
    for cell in range(crowns.shape[0]):
        terrain = kingdom[cell]
        crowns[cell] = analysis[CROWNS, analysis[LABELS, cell]] if 1 <= terrain <= 6 else 0
        opens[cell] = analysis[OPEN, cell]


@kernel
def seat_planes(kingdom, crowns, opens, k, out):
    """The planes of one seat's kingdom, `k` seats after the mover, into a zeroed `out` (planes, cells):
    its terrains, crowns, properties' crowns (`crowns`) and open cells (`opens`)."""
    cells = crowns.shape[0]
    base = PLAYER_PLANES * k
    for cell in range(cells):
        terrain = kingdom[cell]
        if 1 <= terrain <= 6:
            out[base + terrain - 1, cell] = 1.0
            out[base + 7, cell] = crowns[cell]
        out[base + 6, cell] = kingdom[cells + cell]
        out[base + 8, cell] = opens[cell]


@kernel
def table_planes(h, features, fit, row_length, players, gains, out, width):
    """The planes after the kingdoms' (`seat_planes`) of header `h`, into a zeroed `out`: each slot's domino,
    its owner, with `fit` every seat's gain (`gains`, a seat's row read where `gain_read` says), the phase,
    the acting king and the rounds left. Each is constant over the board: written on its first `width`
    cells (all of them, or 1 for a network that reads them as a vector)."""
    slot_planes = FEATURES + players * (1 + fit)
    king = h[KING]
    mover = h[ORDER + king]
    base = PLAYER_PLANES * players
    for start, count_at, owners_at, first in ((ROW, ROW_COUNT, ORDER, 0), (NEXT_ROW, NEXT_COUNT, NEXT_OWNERS, 4)):
        for i in range(h[count_at]):
            number, owner = h[start + i], h[owners_at + i]
            for j in range(FEATURES):
                out[base + j, :width] = features[number, j]
            if owner != FREE:
                out[base + FEATURES + (owner - mover) % players, :width] = 1.0
            elif fit:
                for k in range(players):
                    out[base + FEATURES + players + k, :width] = gains[(mover + k) % players, first + i]
            base += slot_planes
        base += (row_length - h[count_at]) * slot_planes
    out[base, :width] = h[PLACING]
    out[base + 1 + king, :width] = 1.0
    out[base + 1 + row_length, :width] = h[DECK] // row_length
    if not fit or h[DONE]:
        return
    for count_at, owners_at, first in ((ROW_COUNT, ORDER, 0), (NEXT_COUNT, NEXT_OWNERS, 4)):
        for i in range(h[count_at]):
            owner = h[owners_at + i]
            if owner != FREE and gain_read(h, owner, first + i):
                out[base + 2 + row_length + (owner - mover) % players, :width] += gains[owner, first + i]
