"""A user's plugin games that misbehave: the guide's Nim (docs/adding-a-game.md) with a move that puts a
stone back, so that a game may never end, and faults that show only at move 400, after the 300 moves the
contract's check plays. Not imported here (it imports the guide's `nim`): `tests/test_game_length.py` and
`benchmarks/early_errors.py` copy it as `endless.py` beside the guide's nim.py, a user's folder."""

import numpy as np
from nim import Nim, NimState


class NeverEnds(Nim):
    """Nim whose last action puts a stone back on the first heap, and that forgets to end: once the heaps
    are empty, putting a stone back is the only move."""

    def __init__(self, rows: int = 2):
        super().__init__(rows)
        self.num_actions += 1

    def legal_mask(self, state):
        return np.concatenate([super().legal_mask(state), [True]])

    def step(self, state, action, rng=None):
        if action == self.num_actions - 1:
            heaps = (state.heaps[0] + 1, *state.heaps[1:])
            return NimState(heaps, 1 - state.mover, state.ply + 1), None
        return super().step(state, action, rng)

    def is_terminal(self, state):
        return False


class LongButBounded(NeverEnds):
    def max_plies(self):
        return 12_000


class LateStep(NeverEnds):
    def step(self, state, action, rng=None):
        if state.ply >= 400:
            raise KeyError("heap 9")
        return super().step(state, action, rng)


class LateMask(NeverEnds):
    def legal_mask(self, state):
        return super().legal_mask(state) & (state.ply < 400)


class LateSeat(NeverEnds):
    def to_play(self, state):
        return 5 if state.ply >= 400 else state.mover


class LatePlanes(NeverEnds):
    def encode_batch(self, states):
        planes = super().encode_batch(states)
        return planes[:, :, :1] if any(s.ply >= 400 for s in states) else planes


class NanScores(Nim):
    """A game that ends, with scores that are not numbers."""

    def scores(self, state):
        return np.full(2, np.nan)
