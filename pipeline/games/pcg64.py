"""numpy's default generator (`np.random.default_rng`: a `Generator` over `PCG64`) in numba, bit for bit.

Why: search draws a chance move's result from its tree's generator (`Forest.rngs`) as the game's own
`step` would, so that the same seed gives the same games. Drawn from Python, a Kingdomino row cost a
`Generator.choice` call and its glue: 5% of one process's self-play (docs/results/speed-bench.md,
"Step 6"). So search lends its trees' generators to a game's compiled rules as streams, each
generator's state in one uint64 row (`streams`, `store`), draws from them compiled, and gives the
states back, where every later draw (Python's or the kernels') goes on from.

It follows numpy's `pcg64.h` (a 128-bit LCG whose output is the XSL-RR of the new state; a 32-bit draw
takes the low half of a 64-bit one and keeps the high half for the next), `distributions.c`'s
`random_bounded_uint64` (Lemire's method; `bounded`) and `Generator.choice(n, k, replace=False)` for n
up to 10,000 (Floyd's algorithm, then a shuffle; `choice`). The tests hold each against numpy itself.
"""

from __future__ import annotations

import numpy as np

from pipeline.plumbing.kernel_cache import kernel

# a stream's row: the LCG's state and increment (128 bits each, high word first), then the kept half
STATE_HIGH, STATE_LOW, INC_HIGH, INC_LOW, HAS_UINT32, UINTEGER = range(6)
WORDS = 6

_MULTIPLIER_HIGH = np.uint64(0x2360ED051FC65DA4)  # PCG's default 128-bit multiplier
_MULTIPLIER_LOW = np.uint64(0x4385DF649FCCF645)
_LOW32 = np.uint64(0xFFFFFFFF)
_ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_ZERO, _ONE, _32, _58, _63, _64 = (np.uint64(n) for n in (0, 1, 32, 58, 63, 64))
_WORD = (1 << 64) - 1


def is_pcg64(generator) -> bool:
    return isinstance(generator, np.random.Generator) and isinstance(generator.bit_generator, np.random.PCG64)


def streams(generators: list) -> np.ndarray:
    """The generators' (each a `Generator` over `PCG64`) states, a row each."""
    rows = np.zeros((len(generators), WORDS), dtype=np.uint64)
    for row, generator in zip(rows, generators):
        state = generator.bit_generator.state
        lcg = state["state"]
        row[:] = (
            lcg["state"] >> 64, lcg["state"] & _WORD, lcg["inc"] >> 64, lcg["inc"] & _WORD,
            state["has_uint32"], state["uinteger"],
        )  # fmt: skip
    return rows


def store(rows: np.ndarray, generators: list) -> None:
    """Give each generator its stream's state back: its next draw follows the kernels' last."""
    for row, generator in zip(rows.tolist(), generators):
        generator.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": row[STATE_HIGH] << 64 | row[STATE_LOW], "inc": row[INC_HIGH] << 64 | row[INC_LOW]},
            "has_uint32": row[HAS_UINT32],
            "uinteger": row[UINTEGER],
        }


@kernel
def _product(a, b):
    """The 128-bit product of two uint64, as (high, low) words."""
    a_low, a_high, b_low, b_high = a & _LOW32, a >> _32, b & _LOW32, b >> _32
    low_low, high_low, low_high = a_low * b_low, a_high * b_low, a_low * b_high
    cross = (low_low >> _32) + (high_low & _LOW32) + low_high
    return a_high * b_high + (high_low >> _32) + (cross >> _32), (cross << _32) | (low_low & _LOW32)


@kernel
def next_uint64(stream):
    """The stream's next 64 bits (`Generator.bit_generator.random_raw()`)."""
    high, low = _product(stream[STATE_LOW], _MULTIPLIER_LOW)
    high += stream[STATE_LOW] * _MULTIPLIER_HIGH + stream[STATE_HIGH] * _MULTIPLIER_LOW
    new_low = low + stream[INC_LOW]
    high += stream[INC_HIGH] + (_ONE if new_low < low else _ZERO)
    stream[STATE_HIGH], stream[STATE_LOW] = high, new_low
    bits, turn = high ^ new_low, high >> _58
    return (bits >> turn) | (bits << ((_64 - turn) & _63))


@kernel
def next_uint32(stream):
    """The stream's next 32 bits: half of a 64-bit draw, the other half kept for the next call."""
    if stream[HAS_UINT32]:
        stream[HAS_UINT32] = _ZERO
        return stream[UINTEGER]
    bits = next_uint64(stream)
    stream[HAS_UINT32], stream[UINTEGER] = _ONE, bits >> _32
    return bits & _LOW32


@kernel
def bounded(stream, top):
    """A uniform uint64 in [0, top] (`random_bounded_uint64` without a mask), as `Generator.integers(top + 1)`
    draws for one number and `choice` for each pick."""
    top = np.uint64(top)
    if top == _ZERO:
        return _ZERO
    if top <= _LOW32:
        if top == _LOW32:
            return next_uint32(stream)
        span = top + _ONE
        product = next_uint32(stream) * span
        if product & _LOW32 < span:
            threshold = (_LOW32 - top) % span
            while product & _LOW32 < threshold:
                product = next_uint32(stream) * span
        return product >> _32
    if top == _ALL64:
        return next_uint64(stream)
    span = top + _ONE
    high, low = _product(next_uint64(stream), span)
    if low < span:
        threshold = (_ALL64 - top) % span
        while low < threshold:
            high, low = _product(next_uint64(stream), span)
    return high


@kernel
def choice(stream, n, k, out):
    """`out[:k]` = `Generator.choice(n, k, replace=False)`, for n up to 10,000 (above it numpy shuffles a tail
    instead, not followed here): Floyd's k distinct picks
    (a pick already taken gives way to the largest candidate), then a Fisher-Yates shuffle of them."""
    for j in range(n - k, n):
        pick = np.int64(bounded(stream, j))
        for earlier in range(j - (n - k)):
            if out[earlier] == pick:
                pick = j
                break
        out[j - (n - k)] = pick
    for i in range(k - 1, 0, -1):
        other = np.int64(bounded(stream, i))
        out[i], out[other] = out[other], out[i]
