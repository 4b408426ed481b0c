"""Kingdomino (Bruno Cathala, Blue Orange 2016) for 2 to 4 players: draft dominoes, lay them into a
kingdom around a castle, and score every property (connected squares of one terrain) as its squares
times its crowns.

Rules as the first edition's rulebook (Blue Orange, 2016), with these decisions:
- A king's turn is two decisions: place the domino it sits on (discard it when no placement is legal),
  then pick a free domino of the next row; two small action sets instead of one of their product.
- The first round's picking order, random in the rulebook, is seat order (2 players: 0, 1, 0, 1):
  the arena rotates the seats, so fairness comes from the seating and a start stays deterministic.
- Drawing a row is the only chance event: the pick that completes a round draws the next row inside
  `step`, and the drawn numbers, sorted, are the chance key (the Kingdomino notes' chance nodes). Without a
  random generator the draws follow one fixed order; a position written as moves may name its draws
  instead (`parse_draw`: `5-22-32-44`), so real games can be analysed.
- `size=7` is the two-player Mighty Duel: 7x7 kingdoms built from all 48 dominoes.
- Middle Kingdom (`middle=1`): +10 when the castle is the centre of the kingdom's bounding box (the
  rulebook's "castle in the middle" of the kingdom, read on the squares actually laid). The game server
  of Gedda et al. (2018) reads it as every square within two of the castle (the kingdom inside the 5x5
  square centred on it): the same for a complete 5x5 kingdom, but it also pays a kingdom with a gap on
  one side, which the bounding box does not.
  Harmony (`harmony=1`): +5 for a complete size x size kingdom (complete implies nothing discarded).
- Ties: the largest property, then the most crowns; still tied, the places are shared.
- `fit=1` adds input features (KataGo's game-specific inputs) in the greedy player's own reckoning, the
  points a domino's best placement would add to a kingdom: per seat, the sum over the dominoes it holds
  and has still to place (so points plus this is a projected score, and a pick changes it by that
  domino's gain), and for each free domino of the next row, its gain for each seat. A value head
  reads placements well but picks badly without them (NOTES, "How well a domino fits").

A kingdom lives on a (2*size-1)^2 grid with the castle in the middle, so any legal kingdom fits
whichever way it grows. Each terrain is a Python-int bitboard with a spare bit ending every row (as in
`alphazero_games/connect/rules.py`), so a domino's legal placements are a few shifts and masks.
"""

from __future__ import annotations

import random
import re
from typing import NamedTuple

import numpy as np

from pipeline.games.base import IllegalMove, Symmetry

TERRAINS = "WFLGSM"  # wheat field, forest, lake, grassland, swamp, mine: terrain codes 1..6
CASTLE = 7  # the castle's code in `kingdom_grid` (0 is an empty cell)
PROPERTY_CROWN_BITS = 6  # a property's crowns in binary digits: the deck holds 39 crowns in all
PROPERTY_CROWNS_CACHE = 1 << 16  # kingdoms whose property crowns are kept (a few MB)
PLACEMENT_CACHE = 1 << 18  # (kingdom, domino) pairs whose best placement is kept (greedy play, `fit=1`)
DIRECTIONS = "rdlu"  # where the second half lies from the first: right, down, left, up
FREE = -1  # owner of a domino no king sits on
_PLACEMENT = re.compile(r"^([a-z])(\d{1,2})([rdlu])$")  # e4r
_PICK = re.compile(r"^p(?:ick)?(\d)$")  # p2, pick2
_DRAW = re.compile(r"^\d{1,2}(?:-\d{1,2})+$")  # 5-22-32-44: a row's dominoes by number

# The 48 dominoes by number: first half, second half, each a terrain letter and its crowns if any.
# Source: Zomis/Games, games-impl/src/commonMain/kotlin/net/zomis/games/impl/grids/KingDomino.kt; it agrees
# with a second public implementation's table and with the per-terrain totals of clairePoyo/king-domino
# (constants/constants.js): squares 26 W, 22 F, 18 L, 14 G, 10 S, 6 M; crowns 5, 6, 6, 6, 6, 10 (39).
_DOMINO_TEXT = (
    *("W W", "W W", "F F", "F F", "F F", "F F", "L L", "L L", "L L", "G G", "G G", "S S"),
    *("W F", "W L", "W G", "W S", "F L", "F G", "W1 F", "W1 L", "W1 G", "W1 S", "W1 M", "F1 W"),
    *("F1 W", "F1 W", "F1 W", "F1 L", "F1 G", "L1 W", "L1 W", "L1 F", "L1 F", "L1 F", "L1 F", "W G1"),
    *("L G1", "W S1", "G S1", "M1 W", "W G2", "L G2", "W S2", "G S2", "M2 W", "S M2", "S M2", "W M3"),
)


def _domino_table() -> tuple[np.ndarray, np.ndarray]:
    terrains, crowns = np.zeros((49, 2), dtype=np.int64), np.zeros((49, 2), dtype=np.int64)
    for number, text in enumerate(_DOMINO_TEXT, start=1):
        for half, square in enumerate(text.split()):
            terrains[number, half] = TERRAINS.index(square[0]) + 1
            crowns[number, half] = int(square[1:] or 0)
    return terrains, crowns


DOMINO_TERRAINS, DOMINO_CROWNS = _domino_table()  # (49, 2): row n is domino n's halves; row 0 unused
# the same table as Python ints, ((terrain, crowns), (terrain, crowns)) per number, for the hot loops
_HALVES = tuple(tuple(zip(t, c)) for t, c in zip(DOMINO_TERRAINS.tolist(), DOMINO_CROWNS.tolist()))


def _domino_features() -> np.ndarray:
    """Per domino the network's 14 numbers: each half's terrain one-hot, then its crowns (0-3)."""
    features = np.zeros((49, 14), dtype=np.float32)
    for half in range(2):
        features[np.arange(1, 49), 7 * half + DOMINO_TERRAINS[1:, half] - 1] = 1.0
        features[:, 7 * half + 6] = DOMINO_CROWNS[:, half]
    return features


_FEATURES = _domino_features()
# draws without a generator follow this fixed shuffle, so `initial_state()` is a fair, repeatable game
_DEFAULT_ORDER = tuple(int(n) for n in np.random.default_rng(2016).permutation(np.arange(1, 49)))


def _joined(properties: list[tuple[int, int, int]], near: int, squares: int, crowns: int) -> int:
    """The points that `squares` new squares of one terrain holding `crowns` add, where `near` marks the
    cells next to them: every property touching them merges with them into one."""
    before = 0
    for region, region_squares, region_crowns in properties:
        if region & near:
            squares += region_squares
            crowns += region_crowns
            before += region_squares * region_crowns
    return squares * crowns - before


class Kingdom(NamedTuple):
    lands: tuple[int, ...]  # bitboards: index 0 the castle, 1..6 the terrains
    crowns_low: int  # squares whose crown count has bit 0 set
    crowns_high: int  # squares whose crown count has bit 1 set
    box: tuple[int, int, int, int]  # top, bottom, left, right occupied row / column, castle included


class KingdominoState(NamedTuple):
    kingdoms: tuple[Kingdom, ...]  # one per absolute seat
    row: tuple[int, ...]  # the dominoes the kings sit on this round, by number (empty in the first round)
    order: tuple[int, ...]  # the seat of each king, in the order they act this round
    next_row: tuple[int, ...]  # the dominoes to pick from, by number (empty in the last round)
    next_owners: tuple[int, ...]  # the seat that picked each, FREE if none
    deck: tuple[int, ...]  # dominoes not drawn yet, in `_DEFAULT_ORDER`
    king: int  # index into `order` of the king acting
    placing: bool  # the king places row[king] (else it picks)
    ply: int
    done: bool


def _draw(deck: tuple[int, ...], count: int, rng) -> list[int]:
    """`count` dominoes from the deck: a numpy Generator (`step`), a random.Random (playouts), or None."""
    if rng is None:
        return list(deck[:count])
    if isinstance(rng, random.Random):
        return rng.sample(deck, count)
    return [deck[i] for i in rng.choice(len(deck), size=count, replace=False)]


class KingdominoGame:
    """Actions: a placement is cell * 4 + direction (the first half's cell, row-major from the top-left
    of the grid; the second half right, down, left or up of it), then one discard, then one pick per
    slot of the next row."""

    def __init__(self, num_players: int = 4, size: int = 5, middle: int = 0, harmony: int = 0, fit: int = 0):
        if not 2 <= num_players <= 4:
            raise ValueError(f"kingdomino: players must be 2 to 4, got {num_players}")
        if size not in (5, 7):
            raise ValueError(f"kingdomino: size must be 5 or 7, got {size}")
        if size == 7 and num_players != 2:
            raise ValueError(f"kingdomino: size=7 (the Mighty Duel) is for 2 players, got {num_players}")
        if middle not in (0, 1) or harmony not in (0, 1) or fit not in (0, 1):
            raise ValueError(f"kingdomino: middle, harmony and fit must be 0 or 1, got {middle}, {harmony} and {fit}")
        self.num_players, self.size, self.middle, self.harmony, self.fit = num_players, size, middle, harmony, fit
        # fit=0 stays out of the name, so networks trained before the option still name this game
        self.name = f"kingdomino(players={num_players},size={size},middle={middle},harmony={harmony}{',fit=1' * fit})"
        self.row_length = 3 if num_players == 3 else 4
        self.deck_size = {2: 24 if size == 5 else 48, 3: 36, 4: 48}[num_players]
        self.grid = 2 * size - 1
        cells = self.grid * self.grid
        self.discard = 4 * cells
        self.first_pick = self.discard + 1
        self.num_actions = self.first_pick + self.row_length
        self._player_planes, self._slot_planes = 9, 14 + num_players * (1 + fit)  # features, owner, free gains
        planes = num_players * self._player_planes + 2 * self.row_length * self._slot_planes + self.row_length + 2
        planes += num_players * fit  # each seat's pending gain
        self.observation_shape = (planes, self.grid, self.grid)
        self._constant_planes = planes - num_players * self._player_planes  # rows, kings, phase: the network's vector
        self._property_crowns_cache: dict[Kingdom, list[int]] = {}
        self._placement_cache: dict[tuple, tuple[int, int]] = {}
        self._init_geometry()

    def _init_geometry(self) -> None:
        grid, stride = self.grid, self.grid + 1
        self._stride, self._centre = stride, self.size - 1
        self._cell_bit = [r * stride + c for r in range(grid) for c in range(grid)]
        self._bit_cell = [-1] * (grid * stride)
        for cell, bit in enumerate(self._cell_bit):
            self._bit_cell[bit] = cell
        self._cell_bit_array = np.array(self._cell_bit)
        self._bytes = (grid * stride + 7) // 8
        self._full = sum(1 << bit for bit in self._cell_bit)
        self._offset = (1, stride, -1, -stride)
        self._near = [self._dilate(1 << bit) for bit in range(grid * stride)]  # each cell's four neighbours
        row_bits = [sum(1 << (r * stride + c) for c in range(grid)) for r in range(grid)]
        column_bits = [sum(1 << (r * stride + c) for r in range(grid)) for c in range(grid)]
        self._row_band = [[sum(row_bits[lo : hi + 1]) for hi in range(grid)] for lo in range(grid)]
        self._column_band = [[sum(column_bits[lo : hi + 1]) for hi in range(grid)] for lo in range(grid)]
        centre = self._centre
        castle = 1 << (centre * stride + centre)
        self._empty_kingdom = Kingdom((castle,) + (0,) * 6, 0, 0, (centre,) * 4)

    def __repr__(self) -> str:
        return self.name

    # --- kingdoms ----------------------------------------------------------------------------
    def _dilate(self, bits: int) -> int:
        stride = self._stride
        return ((bits << 1) | (bits >> 1) | (bits << stride) | (bits >> stride)) & self._full

    def _open(self, kingdom: Kingdom) -> int:
        """Empty cells a square may still go to without the kingdom outgrowing size x size."""
        top, bottom, left, right = kingdom.box
        reach = self.size - 1
        window = self._row_band[bottom - reach][top + reach] & self._column_band[right - reach][left + reach]
        occupied = 0
        for land in kingdom.lands:
            occupied |= land
        return window & ~occupied

    def _placements(self, kingdom: Kingdom, number: int) -> tuple[int, int, int, int]:
        """Per direction, the bitboard of first-half cells where domino `number` may be placed: both
        cells open, and one half next to the castle or to a square of its own terrain."""
        (first, _), (second, _) = _HALVES[number]
        free, castle, stride = self._open(kingdom), kingdom.lands[0], self._stride
        near_first = self._dilate(kingdom.lands[first] | castle)
        near_second = near_first if second == first else self._dilate(kingdom.lands[second] | castle)
        return (
            free & (free >> 1) & (near_first | (near_second >> 1)),
            free & (free >> stride) & (near_first | (near_second >> stride)),
            free & (free << 1) & (near_first | (near_second << 1)),
            free & (free << stride) & (near_first | (near_second << stride)),
        )

    def _placement_actions(self, placements: tuple[int, ...]) -> list[int]:
        actions = []
        for direction, bits in enumerate(placements):
            while bits:
                bit = bits.bit_length() - 1
                actions.append(4 * self._bit_cell[bit] + direction)
                bits ^= 1 << bit
        actions.sort()
        return actions

    def _cells(self, action: int) -> tuple[int, int]:
        """The bits of a placement's first and second half."""
        first = self._cell_bit[action >> 2]
        return first, first + self._offset[action & 3]

    def _grown_box(self, box: tuple[int, int, int, int], first: int, second: int) -> tuple[int, int, int, int]:
        (row_a, column_a), (row_b, column_b) = divmod(first, self._stride), divmod(second, self._stride)
        top, bottom, left, right = box
        return (
            min(top, row_a, row_b),
            max(bottom, row_a, row_b),
            min(left, column_a, column_b),
            max(right, column_a, column_b),
        )

    def _place(self, kingdom: Kingdom, number: int, action: int) -> Kingdom:
        (terrain_a, crowns_a), (terrain_b, crowns_b) = _HALVES[number]
        first, second = self._cells(action)
        a, b = 1 << first, 1 << second
        lands = list(kingdom.lands)
        lands[terrain_a] |= a
        lands[terrain_b] |= b
        low = kingdom.crowns_low | (a if crowns_a & 1 else 0) | (b if crowns_b & 1 else 0)
        high = kingdom.crowns_high | (a if crowns_a & 2 else 0) | (b if crowns_b & 2 else 0)
        return Kingdom(tuple(lands), low, high, self._grown_box(kingdom.box, first, second))

    def _region(self, square: int, land: int) -> int:
        """The property (connected squares of `land`) holding `square`."""
        region = square
        while True:
            grown = region | (self._dilate(region) & land)
            if grown == region:
                return region
            region = grown

    def _crowned_properties(self, land: int, low: int, high: int):
        """(property, its crowns) for one terrain's properties that hold a crown (only those score), so
        the flood fill starts from crowned squares alone."""
        seeds = land & (low | high)
        while seeds:
            region = self._region(seeds & -seeds, land)
            seeds &= ~region
            yield region, (region & low).bit_count() + 2 * (region & high).bit_count()

    def _properties(self, land: int, low: int, high: int):
        """(property, its squares, its crowns) for each of one terrain's properties, crowned or not."""
        rest = land
        while rest:
            region = self._region(rest & -rest, land)
            rest &= ~region
            yield region, region.bit_count(), (region & low).bit_count() + 2 * (region & high).bit_count()

    def _terrain_points(self, land: int, low: int, high: int) -> int:
        """Squares times crowns over one terrain's properties."""
        return sum(region.bit_count() * crowns for region, crowns in self._crowned_properties(land, low, high))

    def _property_crowns(self, kingdom: Kingdom) -> list[int]:
        """Each square's property's crowns, as PROPERTY_CROWN_BITS bitboards (bit k: the crowns' k-th
        binary digit). Summed over the grid this is the kingdom's points without bonuses: the network
        reads the score off it instead of learning to flood-fill properties. Cached: a search meets the
        same kingdoms over and over (a move changes one), and the flood fill doubled encoding's cost."""
        cached = self._property_crowns_cache.get(kingdom)
        if cached is not None:
            return cached
        if len(self._property_crowns_cache) >= PROPERTY_CROWNS_CACHE:
            self._property_crowns_cache.clear()
        digits = [0] * PROPERTY_CROWN_BITS
        low, high = kingdom.crowns_low, kingdom.crowns_high
        for land in kingdom.lands[1:]:
            for region, crowns in self._crowned_properties(land, low, high):
                for k in range(PROPERTY_CROWN_BITS):
                    if crowns >> k & 1:
                        digits[k] |= region
        self._property_crowns_cache[kingdom] = digits
        return digits

    def _bonus(self, box: tuple[int, int, int, int], squares: int) -> int:
        top, bottom, left, right = box
        bonus = 0
        if self.middle and top + bottom == 2 * self._centre and left + right == 2 * self._centre:
            bonus += 10
        if self.harmony and squares == self.size * self.size:
            bonus += 5
        return bonus

    def points(self, kingdom: Kingdom) -> int:
        """The kingdom's score as if the game ended now: properties plus the optional bonuses."""
        squares = sum(land.bit_count() for land in kingdom.lands)
        properties = sum(
            self._terrain_points(land, kingdom.crowns_low, kingdom.crowns_high) for land in kingdom.lands[1:]
        )
        return properties + self._bonus(kingdom.box, squares)

    def _largest_property(self, kingdom: Kingdom) -> int:
        low, high = kingdom.crowns_low, kingdom.crowns_high
        sizes = [squares for land in kingdom.lands[1:] for _, squares, _ in self._properties(land, low, high)]
        return max(sizes, default=0)

    def kingdom_grid(self, kingdom: Kingdom) -> tuple[np.ndarray, np.ndarray]:
        """(terrain codes, crowns), each grid x grid: 0 empty, 1..6 TERRAINS, CASTLE in the middle."""
        *lands, low, high = self._unpack([*kingdom.lands, kingdom.crowns_low, kingdom.crowns_high]).astype(np.int64)
        terrain = np.array([CASTLE, *range(1, len(TERRAINS) + 1)]) @ np.array(lands)  # lands[0] is the castle
        crowns = low + 2 * high
        shape = (self.grid, self.grid)
        return terrain.reshape(shape), crowns.reshape(shape)

    def kingdom_from_grid(self, terrain: np.ndarray, crowns: np.ndarray) -> Kingdom:
        """A kingdom from grid x grid arrays (as `kingdom_grid` returns); the castle is always the middle."""
        kingdom = self._empty_kingdom
        lands, low, high = list(kingdom.lands), 0, 0
        box = kingdom.box
        for cell, (code, count) in enumerate(zip(np.ravel(terrain).tolist(), np.ravel(crowns).tolist())):
            bit = self._cell_bit[cell]
            if 1 <= code <= len(TERRAINS) and cell != self._centre * (self.grid + 1):
                lands[code] |= 1 << bit
                low |= (count & 1) << bit
                high |= (count >> 1 & 1) << bit
                box = self._grown_box(box, bit, bit)
        return Kingdom(tuple(lands), low, high, box)

    def _unpack(self, boards: list[int]) -> np.ndarray:
        """Bitboards as one bool per grid cell each, row-major: (boards, cells). All at once, because
        unpacking them one by one took a third of Kingdomino's self-play time."""
        raw = np.frombuffer(b"".join(bits.to_bytes(self._bytes, "little") for bits in boards), dtype=np.uint8)
        cells = np.unpackbits(raw.reshape(len(boards), self._bytes), axis=1, bitorder="little")
        return cells[:, self._cell_bit_array].view(bool)

    # --- rules -------------------------------------------------------------------------------
    def initial_state(self, rng=None) -> KingdominoState:
        """Set aside the unused dominoes (2 and 3 players) and draw the first row, from `rng` (a numpy
        Generator) or, without one, the fixed default order."""
        in_play = set(_draw(_DEFAULT_ORDER, self.deck_size, rng))
        deck = tuple(n for n in _DEFAULT_ORDER if n in in_play)
        first_row = sorted(_draw(deck, self.row_length, rng))
        deck = tuple(n for n in deck if n not in first_row)
        order = tuple(k % self.num_players for k in range(self.row_length))
        kingdoms = (self._empty_kingdom,) * self.num_players
        return KingdominoState(
            kingdoms, (), order, tuple(first_row), (FREE,) * self.row_length, deck, 0, False, 0, False
        )

    def legal_actions(self, state: KingdominoState) -> list[int]:
        if state.done:
            return []
        if not state.placing:
            return [self.first_pick + slot for slot, owner in enumerate(state.next_owners) if owner == FREE]
        kingdom = state.kingdoms[state.order[state.king]]
        return self._placement_actions(self._placements(kingdom, state.row[state.king])) or [self.discard]

    def legal_mask(self, state: KingdominoState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=bool)
        mask[self.legal_actions(state)] = True
        return mask

    def _is_legal(self, state: KingdominoState, action: int) -> bool:
        if state.placing:
            placements = self._placements(state.kingdoms[state.order[state.king]], state.row[state.king])
            if action == self.discard:
                return not any(placements)
            return 0 <= action < self.discard and bool(placements[action & 3] >> self._cell_bit[action >> 2] & 1)
        slot = action - self.first_pick
        return 0 <= slot < len(state.next_row) and state.next_owners[slot] == FREE

    def step(self, state: KingdominoState, action: int, rng=None) -> tuple[KingdominoState, tuple[int, ...] | None]:
        """`rng` (a numpy Generator; None: the default order) draws the next row when this pick ends a round."""
        if state.done:
            raise IllegalMove("the game is over")
        if not self._is_legal(state, action):
            shown = self.format_move(action) if 0 <= action < self.num_actions else f"action {action}"
            raise IllegalMove(f"{shown} is not legal here")
        return self._apply(state, action, rng)

    def step_legal(self, state: KingdominoState, action: int, rng=None) -> tuple[KingdominoState, tuple | None]:
        """`step` without its check, for search's actions from a legal mask (`base.py`'s `StepsLegalMoves`)."""
        return self._apply(state, action, rng)

    def _apply(self, state: KingdominoState, action: int, rng) -> tuple[KingdominoState, tuple[int, ...] | None]:
        mover, ply = state.order[state.king], state.ply + 1
        if state.placing:
            kingdoms = state.kingdoms
            if action != self.discard:
                placed = self._place(kingdoms[mover], state.row[state.king], action)
                kingdoms = kingdoms[:mover] + (placed,) + kingdoms[mover + 1 :]
            if state.next_row:
                return state._replace(kingdoms=kingdoms, placing=False, ply=ply), None
            last = state.king + 1 == len(state.order)
            return state._replace(kingdoms=kingdoms, king=state.king + (not last), ply=ply, done=last), None
        slot = action - self.first_pick
        owners = state.next_owners[:slot] + (mover,) + state.next_owners[slot + 1 :]
        if state.king + 1 < len(state.order):
            return state._replace(next_owners=owners, king=state.king + 1, placing=bool(state.row), ply=ply), None
        drawn = tuple(sorted(_draw(state.deck, self.row_length, rng))) if state.deck else ()
        deck = tuple(n for n in state.deck if n not in drawn)
        next_state = state._replace(
            row=state.next_row,
            order=owners,
            next_row=drawn,
            next_owners=(FREE,) * len(drawn),
            deck=deck,
            king=0,
            placing=True,
            ply=ply,
        )
        return next_state, drawn or None

    def to_play(self, state: KingdominoState) -> int:
        return state.order[state.king]

    def ply(self, state: KingdominoState) -> int:
        return state.ply

    def is_terminal(self, state: KingdominoState) -> bool:
        return state.done

    def margins(self, state: KingdominoState) -> np.ndarray:
        """Points per seat: the margin for value schemes that reward bigger wins."""
        return np.array([self.points(k) for k in state.kingdoms], dtype=np.float64)

    def margin_scale(self) -> float:
        return 20.0  # a typical gap in points between two players

    def constant_planes(self) -> int:
        """The encoding's last planes, constant over the board: rows, kings and phase."""
        return self._constant_planes

    def scores(self, state: KingdominoState) -> np.ndarray:
        """Each seat's pairwise standing against every other (1 ahead, 0.5 tied, 0 behind), scaled to
        [-1, 1]; ranked by points, then the largest property, then crowns."""
        ranks = [
            (self.points(k), self._largest_property(k), k.crowns_low.bit_count() + 2 * k.crowns_high.bit_count())
            for k in state.kingdoms
        ]
        wins = [sum((mine > theirs) + 0.5 * (mine == theirs) for theirs in ranks) - 0.5 for mine in ranks]
        return (2.0 * np.array(wins) / (self.num_players - 1) - 1.0).astype(np.float32)

    def random_playout(self, state: KingdominoState, rng: random.Random) -> np.ndarray:
        while not state.done:
            state, _ = self._apply(state, rng.choice(self.legal_actions(state)), rng)
        return self.scores(state)

    # --- the anchor's player-greedy policy (Gedda et al. 2018) --------------------------------
    def _placement_gain(self, kingdom: Kingdom, number: int) -> tuple[int, int]:
        """(action, points it adds) of the placement that leaves the kingdom the most points, the first of
        equals; (discard, 0) when nothing fits. A half joins the properties of its terrain that touch it,
        so each placement is scored from those properties' squares and crowns, without a flood fill."""
        actions = self._placement_actions(self._placements(kingdom, number))
        if not actions:
            return self.discard, 0
        (terrain_a, crowns_a), (terrain_b, crowns_b) = _HALVES[number]
        lands, low, high, near = kingdom.lands, kingdom.crowns_low, kingdom.crowns_high, self._near
        properties_a = list(self._properties(lands[terrain_a], low, high))
        properties_b = properties_a if terrain_b == terrain_a else list(self._properties(lands[terrain_b], low, high))
        bonuses = self.middle or self.harmony
        if bonuses:
            squares = sum(land.bit_count() for land in lands)
            bonus_now = self._bonus(kingdom.box, squares)
        best_action, best = self.discard, None
        for action in actions:
            first, second = self._cells(action)
            if terrain_a == terrain_b:
                gain = _joined(properties_a, near[first] | near[second], 2, crowns_a + crowns_b)
            else:
                gain = _joined(properties_a, near[first], 1, crowns_a)
                gain += _joined(properties_b, near[second], 1, crowns_b)
            if bonuses:
                gain += self._bonus(self._grown_box(kingdom.box, first, second), squares + 2) - bonus_now
            if best is None or gain > best:
                best_action, best = action, gain
        return best_action, best

    def _best_placement(self, kingdom: Kingdom, number: int) -> tuple[int, int]:
        """`_placement_gain`, cached: a search meets the same kingdoms and rows over and over, and a greedy
        king places next round the very domino whose placement it weighed when it picked it. Keyed by
        plain tuples of ints (the box follows from the lands), which the garbage collector stops tracking."""
        key = (kingdom.lands, kingdom.crowns_low, kingdom.crowns_high, number)
        best = self._placement_cache.get(key)
        if best is None:
            if len(self._placement_cache) >= PLACEMENT_CACHE:
                self._placement_cache.clear()
            best = self._placement_cache[key] = self._placement_gain(kingdom, number)
        return best

    def _fit(self, kingdom: Kingdom, number: int) -> int:
        """The points the domino's best placement adds to the kingdom (0 when it is discarded)."""
        return self._best_placement(kingdom, number)[1]

    def _pending(self, state: KingdominoState) -> list[int]:
        """Per absolute seat, the gains (`_fit`) of the dominoes its kings hold and have not placed yet:
        this row's from the acting king on (its own while it has still to place), and the next row's."""
        pending = [0] * self.num_players
        if state.done:
            return pending
        held = [
            (number, owner)
            for i, (number, owner) in enumerate(zip(state.row, state.order))
            if i > state.king or (i == state.king and state.placing)
        ]
        held += [(number, owner) for number, owner in zip(state.next_row, state.next_owners) if owner != FREE]
        for number, owner in held:
            pending[owner] += self._fit(state.kingdoms[owner], number)
        return pending

    def greedy_action(self, state: KingdominoState) -> int:
        """Player-greedy: place where the mover's score rises most; pick the domino whose best placement
        in the mover's kingdom now scores most (the lowest slot of equals)."""
        kingdom = state.kingdoms[state.order[state.king]]
        if state.placing:
            return self._best_placement(kingdom, state.row[state.king])[0]
        free = [slot for slot, owner in enumerate(state.next_owners) if owner == FREE]
        values = [self._fit(kingdom, state.next_row[slot]) for slot in free]
        return self.first_pick + free[int(np.argmax(values))]

    # --- network view ------------------------------------------------------------------------
    def encode(self, state: KingdominoState) -> np.ndarray:
        return self.encode_batch([state])[0]

    def encode_batch(self, states: list[KingdominoState]) -> np.ndarray:
        """Planes per state, seats in turn order from the mover: per seat 6 terrain planes, its crowns
        (0-3), each square's property's crowns (the plane's sum is the seat's points), and the cells
        still open to it; then per slot of this row and the next, the domino's 14 numbers (constant
        planes), its king's seat one-hot and, with `fit=1` and no king on it, its best placement's points
        in each seat's kingdom; then placing-or-picking, the acting king one-hot, the rows left in the
        deck and, with `fit=1`, each seat's pending gain (`_pending`). Whole numbers, so replay keeps
        them as bytes (but for a gain below 0, which only Middle Kingdom makes)."""
        planes = np.zeros((len(states), *self.observation_shape), dtype=np.float32)
        p, movers, boards = self.num_players, [self.to_play(state) for state in states], []
        for state, mover in zip(states, movers):
            for k in range(p):
                kingdom = state.kingdoms[(mover + k) % p]
                boards += [*kingdom.lands[1:], kingdom.crowns_low, kingdom.crowns_high]
                boards += [*self._property_crowns(kingdom), self._open(kingdom)]
        boards_per_seat = len(TERRAINS) + 3 + PROPERTY_CROWN_BITS
        cells = self._unpack(boards).reshape(len(states), p, boards_per_seat, self.grid, self.grid)
        kingdoms = np.empty((len(states), p, self._player_planes, self.grid, self.grid), dtype=np.float32)
        terrains, crowns, digits = len(TERRAINS), len(TERRAINS) + 2, 2 ** np.arange(PROPERTY_CROWN_BITS)
        kingdoms[:, :, :terrains] = cells[:, :, :terrains]
        kingdoms[:, :, terrains] = cells[:, :, terrains] + 2.0 * cells[:, :, terrains + 1]  # crowns 0-3
        kingdoms[:, :, terrains + 1] = np.einsum("spkrc,k->sprc", cells[:, :, crowns:-1], digits)
        kingdoms[:, :, -1] = cells[:, :, -1]  # open cells
        planes[:, : p * self._player_planes] = kingdoms.reshape(len(states), -1, self.grid, self.grid)
        for out, state, mover in zip(planes, states, movers):
            base = p * self._player_planes
            for dominoes, owners in ((state.row, state.order), (state.next_row, state.next_owners)):
                for number, owner in zip(dominoes, owners):
                    out[base : base + 14] = _FEATURES[number][:, None, None]
                    if owner != FREE:
                        out[base + 14 + (owner - mover) % p] = 1.0
                    elif self.fit:
                        for k in range(p):
                            out[base + 14 + p + k] = self._fit(state.kingdoms[(mover + k) % p], number)
                    base += self._slot_planes
                base += (self.row_length - len(dominoes)) * self._slot_planes
            out[base] = state.placing
            out[base + 1 + state.king] = 1.0
            out[base + 1 + self.row_length] = len(state.deck) // self.row_length
            if self.fit:
                pending = self._pending(state)
                seats = [pending[(mover + k) % p] for k in range(p)]
                out[base + 2 + self.row_length :] = np.array(seats, dtype=np.float32)[:, None, None]
        return planes

    def symmetries(self) -> list[Symmetry]:
        """The square's 8 symmetries: the castle is the centre, so turning or mirroring every kingdom
        keeps every placement's legality and every score; a placement maps to the turned cell with the
        turned direction."""
        transforms = [
            lambda x: x,
            lambda x: np.flip(x, -1),
            lambda x: np.flip(x, -2),
            lambda x: np.flip(x, (-2, -1)),
            lambda x: np.swapaxes(x, -1, -2),
            lambda x: np.rot90(x, 1, (-2, -1)),
            lambda x: np.rot90(x, -1, (-2, -1)),
            lambda x: np.flip(np.swapaxes(x, -1, -2), (-2, -1)),
        ]
        grid, centre = self.grid, self._centre
        steps = ((0, 1), (1, 0), (0, -1), (-1, 0))
        symmetries = []
        for transform in transforms:
            source = np.ascontiguousarray(transform(np.arange(grid * grid).reshape(grid, grid)))
            directions = []  # new direction -> old direction, read off the centre's neighbours
            for dr, dc in steps:
                old = divmod(int(source[centre + dr, centre + dc]), grid)
                directions.append(steps.index((old[0] - centre, old[1] - centre)))
            placements = 4 * source.reshape(-1, 1) + np.array(directions)[None, :]
            perm = np.concatenate([placements.ravel(), np.arange(self.discard, self.num_actions)])
            symmetries.append(Symmetry(transform, perm))
        return symmetries

    # --- people ------------------------------------------------------------------------------
    def _domino_text(self, number: int) -> str:
        halves = (f"{TERRAINS[t - 1]}{c or ''}" for t, c in _HALVES[number])
        return f"{number} {'/'.join(halves)}"

    def _picture(self, kingdom: Kingdom) -> list[str]:
        """The part of the grid the kingdom may still reach, with the column letters and row numbers a
        placement is typed with; a square is its terrain letter and crowns, the castle ##."""
        terrain, crowns = self.kingdom_grid(kingdom)
        top, bottom, left, right = kingdom.box
        reach = self.size - 1
        rows, columns = range(bottom - reach, top + reach + 1), range(right - reach, left + reach + 1)
        lines = ["    " + " ".join(f"{chr(ord('a') + c):2}" for c in columns).rstrip()]
        for r in rows:
            squares = []
            for c in columns:
                code = int(terrain[r, c])
                square = "##" if code == CASTLE else f"{TERRAINS[code - 1]}{crowns[r, c] or ' '}" if code else ". "
                squares.append(square)
            lines.append(f"{r + 1:>2}  " + " ".join(squares).rstrip())
        return lines

    def render(self, state: KingdominoState) -> str:
        lines = []
        for seat, kingdom in enumerate(state.kingdoms):
            lines += [f"seat {seat}: {self.points(kingdom)} points", *self._picture(kingdom)]
        placed = [
            f"[{self._domino_text(n)}: seat {o}{', placed' if k < state.king or state.done else ''}]"
            for k, (n, o) in enumerate(zip(state.row, state.order))
        ]
        offered = [
            f"[p{slot + 1} {self._domino_text(n)}: {'free' if o == FREE else f'seat {o}'}]"
            for slot, (n, o) in enumerate(zip(state.next_row, state.next_owners))
        ]
        lines.append(f"this row: {' '.join(placed) or '-'}")
        lines.append(f"next row: {' '.join(offered) or '-'}   ({len(state.deck)} dominoes in the deck)")
        mover = self.to_play(state)
        if state.done:
            lines.append("game over")
        elif state.placing:
            lines.append(f"seat {mover} to place {self._domino_text(state.row[state.king])}")
        else:
            lines.append(f"seat {mover} to pick from the next row")
        return "\n".join(lines)

    def parse_move(self, state: KingdominoState, text: str) -> int:
        """`e4r`: the first half on column e, row 4, the second half to its right (r, d, l, u: right,
        down, left, up); `discard`; `p2` or `pick 2`: the next row's second domino."""
        word = "".join(text.split()).lower()
        placement, pick = _PLACEMENT.match(word), _PICK.match(word)
        action = None
        if word == "discard":
            action = self.discard
        elif pick and 1 <= int(pick.group(1)) <= self.row_length:
            action = self.first_pick + int(pick.group(1)) - 1
        elif placement:
            column, row = ord(placement.group(1)) - ord("a"), int(placement.group(2)) - 1
            if column < self.grid and 0 <= row < self.grid:
                action = 4 * (row * self.grid + column) + DIRECTIONS.index(placement.group(3))
        if action is None:
            last = chr(ord("a") + self.grid - 1)
            raise IllegalMove(
                f"expected a placement like e4r (column a-{last}, row 1-{self.grid}, second half r/d/l/u), "
                f"discard, or p1-p{self.row_length}; got {text.strip()!r}"
            )
        if state.done or not self._is_legal(state, action):
            raise IllegalMove(f"{self.format_move(action)} is not legal here")
        return action

    def parse_draw(self, state: KingdominoState, text: str) -> KingdominoState | None:
        """`state` with the row just drawn (the one to pick from, before any king acts) replaced by the
        dominoes `text` names, `5-22-32-44`; None when `text` is no draw. IllegalMove where that row
        cannot be: a king acted since the draw, the count is not the row's, or a domino is not in the deck."""
        if not _DRAW.match(text.strip()):
            return None
        written = sorted(int(n) for n in text.strip().split("-"))
        first_act = state.king == 0 and (state.placing or not state.row)  # no king acted since the draw
        if not (state.next_row and first_act and all(owner == FREE for owner in state.next_owners)):
            raise IllegalMove(f"draw {text.strip()!r}: no row was just drawn here")
        if len(written) != len(state.next_row) or len(set(written)) != len(written):
            raise IllegalMove(f"draw {text.strip()!r}: a row is {len(state.next_row)} different dominoes")
        pool = set(state.deck) | set(state.next_row)
        if missing := [n for n in written if n not in pool]:
            raise IllegalMove(f"draw {text.strip()!r}: domino {missing[0]} is not in the deck")
        deck = tuple(n for n in _DEFAULT_ORDER if n in pool and n not in written)
        return state._replace(next_row=tuple(written), deck=deck)

    def format_draw(self, state: KingdominoState) -> str:
        """The row to pick from as `parse_draw` reads it."""
        return "-".join(str(n) for n in state.next_row)

    def format_move(self, action: int) -> str:
        if action == self.discard:
            return "discard"
        if action > self.discard:
            return f"p{action - self.first_pick + 1}"
        row, column = divmod(action >> 2, self.grid)
        return f"{chr(ord('a') + column)}{row + 1}{DIRECTIONS[action & 3]}"
