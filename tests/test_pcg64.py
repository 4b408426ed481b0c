"""`pipeline/games/pcg64.py`: numpy's default generator compiled, held against numpy itself, so that search's
compiled draws give the games the plain search draws from the same seed."""

import numpy as np
import pytest

from pipeline.games import pcg64


def test_a_stream_draws_the_generators_raw_bits_and_gives_its_state_back():
    for seed in range(20):
        generator, lent = np.random.default_rng(seed), np.random.default_rng(seed)
        stream = pcg64.streams([lent])
        assert [pcg64.next_uint64(stream[0]) for _ in range(7)] == generator.bit_generator.random_raw(7).tolist()
        # 32 bits take half of a draw and keep the other half for the next, which the stored state holds
        assert pcg64.next_uint32(stream[0]) == generator.integers(2**32, dtype=np.uint64)
        pcg64.store(stream, [lent])
        assert [lent.integers(2**31) for _ in range(3)] == [generator.integers(2**31) for _ in range(3)]


@pytest.mark.parametrize("top", [1, 2, 5, 47, 1000, 2**31 - 1, 2**32 - 2, 2**32 - 1, 2**40, 2**62 - 1, 2**63 + 5])
def test_bounded_is_integers_below_its_bound_plus_one(top):
    for seed in range(30):
        generator = np.random.default_rng(seed)
        stream = pcg64.streams([generator])
        mine = [int(pcg64.bounded(stream[0], np.uint64(top))) for _ in range(5)]
        # one number a call, as `choice` draws each pick (an array's draws share 64-bit draws otherwise)
        assert mine == [int(generator.integers(top, endpoint=True, dtype=np.uint64)) for _ in range(5)]


@pytest.mark.parametrize("n, k", [(1, 1), (5, 5), (10, 3), (44, 4), (48, 4), (48, 1), (30, 2), (9_000, 12)])
def test_choice_without_replacement_is_numpys(n, k):
    for seed in range(200):
        generator = np.random.default_rng(seed)
        stream, picks = pcg64.streams([generator]), np.zeros(k, dtype=np.int64)
        pcg64.choice(stream[0], n, k, picks)
        assert picks.tolist() == generator.choice(n, size=k, replace=False).tolist()


def test_only_numpys_default_generator_is_followed():
    assert pcg64.is_pcg64(np.random.default_rng(1))
    assert not pcg64.is_pcg64(np.random.Generator(np.random.MT19937(1)))
    assert not pcg64.is_pcg64(np.random.RandomState(1))
