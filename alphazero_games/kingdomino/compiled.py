"""Kingdomino with its hot paths compiled (`rule_kernels.py`): the game `make_game` builds.

The rules, states and move text stay the reference's (`rules.py`, pure Python, kept as the
specification the kernels are tested against); the greedy player, greedy playouts, the final
standings and the network's planes run compiled over an int8 copy of each kingdom, made once per
kingdom and cached (a search meets the same kingdoms over and over: a move changes one).

Greedy playouts draw their rows from a stream of their own, seeded by one number from the tree's
generator, where the reference draws each row from the generator: the same seed gives the same games,
but not the reference's games (docs/results/kingdomino-compiled.md, "Kingdomino compiled").
"""

from __future__ import annotations

import numpy as np

from alphazero_games.kingdomino import rows
from alphazero_games.kingdomino import rule_kernels as kernels
from alphazero_games.kingdomino.planes import encode as encode_planes
from alphazero_games.kingdomino.rules import _FEATURES, FREE, Kingdom, KingdominoGame, KingdominoState
from pipeline.games.compiled import CompiledRules

KINGDOM_CACHE = 1 << 16  # kingdoms kept as kernel rows (about 200 bytes each)


class CompiledKingdomino(KingdominoGame):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._rows: dict[Kingdom, np.ndarray] = {}
        self._flags = (self.size, self.middle, self.harmony)

    def bench(self) -> tuple[str, int, int, float] | None:
        """`bench`'s 4-player game (`base.py`'s `SizesItsBench`): the 4x32 SENet of examples/kingdomino.yaml,
        fit on as it plays, a quarter of the games (96 plies each)."""
        return ("kingdomino(players=4,fit=1)", 4, 32, 0.25) if self.num_players == 4 else None

    # --- the kernels' view of a state ---------------------------------------------------------
    def kingdom_row(self, kingdom: Kingdom) -> np.ndarray:
        """The kernels' int8 row of a kingdom: terrain codes, crowns, box (read-only, cached)."""
        row = self._rows.get(kingdom)
        if row is None:
            if len(self._rows) >= KINGDOM_CACHE:
                self._rows.clear()
            boards = (*kingdom.lands, kingdom.crowns_low, kingdom.crowns_high)
            words = np.frombuffer(b"".join([b.to_bytes(24, "little") for b in boards]), dtype=np.uint64)
            row = np.empty(2 * self.grid * self.grid + 4, dtype=np.int8)
            kernels.unpack_kingdom(words, np.array(kingdom.box, dtype=np.int8), self.grid, row)
            row.flags.writeable = False
            self._rows[kingdom] = row
        return row

    def header(self, state: KingdominoState) -> list[int]:
        """The kernels' header of a state (`kingdomino_kernels.HEADER` ints)."""
        pad = (0, 0, 0, 0)
        return [
            *(state.row + pad)[:4], len(state.row), *(state.order + pad)[:4],
            *(state.next_row + pad)[:4], len(state.next_row), *(state.next_owners + pad)[:4],
            state.king, int(state.placing), int(state.done), len(state.deck),
        ]  # fmt: skip

    def _arrays(self, states: list[KingdominoState]) -> tuple[np.ndarray, np.ndarray]:
        rows = [self.kingdom_row(k) for state in states for k in state.kingdoms]
        kingdoms = np.array(rows).reshape(len(states), self.num_players, -1)
        return kingdoms, np.array([self.header(s) for s in states], dtype=np.int64)

    def compiled_rules(self) -> CompiledRules:
        """The rules over search's rows (`rows.py`; `pipeline/games/base.py`'s `CompilesRules`)."""
        return rows.compiled_rules(self)

    # --- compiled paths ---------------------------------------------------------------------------
    def legal_mask(self, state: KingdominoState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=bool)
        if state.done:
            return mask
        if not state.placing:
            mask[[self.first_pick + slot for slot, owner in enumerate(state.next_owners) if owner == FREE]] = True
            return mask
        kingdom = self.kingdom_row(state.kingdoms[state.order[state.king]])
        if not kernels.placement_mask(kingdom, state.row[state.king], self.size, mask):
            mask[self.discard] = True
        return mask

    def legal_actions(self, state: KingdominoState) -> list[int]:
        return np.flatnonzero(self.legal_mask(state)).tolist()

    def _is_legal(self, state: KingdominoState, action: int) -> bool:
        return 0 <= action < self.num_actions and bool(self.legal_mask(state)[action])

    def greedy_action(self, state: KingdominoState) -> int:
        kingdom = self.kingdom_row(state.kingdoms[state.order[state.king]])
        if state.placing:
            placement = kernels.greedy_placement(kingdom, state.row[state.king], *self._flags)
            return self.discard if placement < 0 else int(placement)
        next_row, owners = np.array(state.next_row), np.array(state.next_owners)
        return self.first_pick + int(kernels.greedy_slot(kingdom, next_row, owners, *self._flags))

    def greedy_outcomes(self, states: list[KingdominoState], rngs: list) -> tuple[np.ndarray, np.ndarray]:
        """(scores, points) per state of one greedy playout to the end: `scores` as `scores` gives a
        finished game's, `points` as `margins`. Each playout's draws come from its generator in
        `rngs` (one number each; None: the deck's own order, as the reference without one)."""
        kingdoms, headers = self._arrays(states)  # a fresh stack: the playouts lay dominoes in it
        decks = np.zeros((len(states), 48), dtype=np.int64)
        for deck, state in zip(decks, states):
            deck[: len(state.deck)] = state.deck
        return self.play_out(kingdoms, headers, decks, rngs)

    def play_out(self, kingdoms: np.ndarray, headers: np.ndarray, decks: np.ndarray, rngs: list):
        """`greedy_outcomes` of states as the kernels hold them (kingdoms, headers, decks), a state each
        row; the kingdoms are played on, in place."""
        seeds = [-1 if rng is None else int(rng.integers(kernels.SEED_BOUND)) for rng in rngs]
        return self.play_out_seeded(kingdoms, headers, decks, np.array(seeds, dtype=np.int64))

    def play_out_seeded(self, kingdoms: np.ndarray, headers: np.ndarray, decks: np.ndarray, seeds: np.ndarray):
        """`play_out` with each playout's seed drawn already (`seeds`, int64)."""
        ranks = np.zeros((len(kingdoms), self.num_players, 3), dtype=np.int64)
        kernels.greedy_playouts(kingdoms, headers, decks, seeds, *self._flags, self.row_length, ranks)
        return self.standings(ranks), ranks[:, :, 0].astype(np.float64)

    def ranks(self, state: KingdominoState) -> np.ndarray:
        """Per seat (points, largest property, crowns)."""
        out = np.zeros((self.num_players, 3), dtype=np.int64)
        kernels.ranks(np.stack([self.kingdom_row(k) for k in state.kingdoms]), *self._flags, out)
        return out

    def scores(self, state: KingdominoState) -> np.ndarray:
        return self.standings(self.ranks(state)[None])[0]

    def margins(self, state: KingdominoState) -> np.ndarray:
        return self.ranks(state)[:, 0].astype(np.float64)

    def standings(self, ranks: np.ndarray) -> np.ndarray:
        """`scores` from (games, players, 3) ranks: each seat's pairwise standing against every other
        (1 ahead, 0.5 tied, 0 behind; ranked by points, then largest property, then crowns), in [-1, 1]."""
        out = np.empty(ranks.shape[:2], dtype=np.float32)
        kernels.standings(ranks, out)
        return out

    def encode_batch(self, states: list[KingdominoState]) -> np.ndarray:
        kingdoms, headers = self._arrays(states)
        planes = np.empty((len(states), self.observation_shape[0], self.grid * self.grid), dtype=np.float32)
        encode_planes(kingdoms, headers, _FEATURES, *self._flags, self.fit, self.row_length, planes)
        return planes.reshape(len(states), *self.observation_shape)


def kingdomino(players: int = 4, size: int = 5, middle: int = 0, harmony: int = 0, fit: int = 0) -> CompiledKingdomino:
    """The registered game (pyproject.toml's `alphazero_pipeline.games`): `kingdomino(players=2)`."""
    return CompiledKingdomino(players, size, middle, harmony, fit)
