"""A game's rules compiled over fixed-width int64 rows: what search's compiled expansion runs.

Why: with a small network, creating, judging and encoding each new node in Python costs a third of
self-play's time (docs/results/speed-bench.md, "Where a simulation's time goes"). A game that offers
`CompiledRules` (`base.py`'s `CompilesRules`) lets search do all of it for a whole batch of trees in a
few compiled calls a step (`pipeline/search/mcts.py`'s `_find_leaves_compiled`), with no Python per
node.

Each compiled function is a numba function (`@kernel`, `pipeline/plumbing/kernel_cache.py`: numba's
`njit(cache=True)` with a cache that follows the kernels it calls) over the forest's rows (`rows`: one int64
row a node) for the first `count` nodes a batch names; it takes `shape`, the game's constants as an
int64 array, first, so that one compiled function serves every variant of a game:

- `step(shape, rows, parents, actions, children, count)`: row `children[i]` becomes row `parents[i]`
  after `actions[i]`, an action its legal mask allows;
- `mover(shape, rows, nodes, count, out)`: `out[i]`, the seat to move at `nodes[i]`, or -1 where the game is over;
- `legal(shape, rows, nodes, count, out)`: `out[nodes[i], a]`, whether action `a` is legal there (asked of
  finished games too, whose masks are not read);
- `encode(shape, rows, nodes, count, out)`: `out[i]`, the network's planes (float32, the observation
  shape) of `nodes[i]`, as the game's `encode` gives them.

A game with chance moves offers three more:

- `chance(shape, rows, nodes, actions, count, out)`: `out[i]`, whether `actions[i]` at `nodes[i]` has a
  random result (`step` is never asked for those moves);
- `draw(row, rng)`, plain Python: the chance key (a tuple of ints) of such a move's result, drawn from
  `rng` (a numpy Generator) exactly as the game's own `step` draws it, so that the same seed gives the
  plain search's games;
- `outcome(shape, rows, parents, actions, keys, children, count)`: row `children[i]` becomes row
  `parents[i]` after `actions[i]` with the result `keys[i]` (the key as int64, `draw`'s ints in order).

Its `key_width` says how many ints every chance key holds. It may offer `draw_keys(shape, rows, parents,
streams, trees, count, keys)` too: `keys[i]`, `draw`'s key at row `parents[i]` drawn from stream
`streams[trees[i]]` (`pcg64.py`: numpy's default generator, compiled), so that search draws a batch's
outcomes in one call and the same seed still gives the same games.

A game with constant planes (`base.py`'s `HasConstantPlanes`) may offer `encode_vectors`, as `encode` but
writing each constant plane at its first cell only: search calls it where the network reads those planes
as a vector (`search/evaluator.py`'s `reads_constant_vector`), and leaves the rest of them as it was.

A game that plays greedy playouts (`base.py`'s `PlaysGreedy`) may offer `playouts(rows, rngs)`, plain
Python (`rows` a 2-D array or a list of rows): `greedy_outcomes` of the rows' states (its (scores,
margins), each playout drawing from its generator in `rngs` as from the state); without it, a search that
mixes playouts in keeps the plain search.
With `draw_keys` too it may offer `playouts_from_streams(streams, rows, trees)`: the same, each playout
drawing from stream `streams[trees[i]]` what `playouts` draws from that tree's generator, so that a search
mixing playouts in keeps its generators lent to the kernels (else it draws its outcomes in Python).

Search calls them from Python, never passes them to a compiled function: numba's cache keeps no
kernel that takes functions as arguments safely across processes. So a function may as well be Python
around a numba kernel that takes more (Kingdomino's `encode` passes its memo of kingdoms).

`to_row` and `from_row` are plain Python: a state's row and back, equal rows for equal states only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class CompiledRules:
    width: int  # int64 entries a row holds
    shape: np.ndarray  # the game's constants, every compiled function's first argument
    to_row: Callable[[Any], np.ndarray]
    from_row: Callable[[np.ndarray], Any]
    step: Any
    mover: Any
    legal: Any
    encode: Any
    # a game with chance moves: which moves they are, a result drawn in Python, the row it leads to
    chance: Any = None
    draw: Callable[[np.ndarray, Any], tuple[int, ...]] | None = None
    outcome: Any = None
    playouts: Callable[[Any, list], tuple[np.ndarray, Any]] | None = None  # greedy, from rows
    # a game with constant planes (`HasConstantPlanes`): `encode` writing each of them at its first cell only,
    # for a network that reads them as a vector (`senet.py`'s constant stem; `reads_constant_vector`), the
    # rest of the planes left as they were: most of a position's planes are constant, and writing them
    # over the board was most of its encoding
    encode_vectors: Any = None
    # a game with chance moves: the ints of its keys; `draw` compiled, from numpy's generators lent as streams
    key_width: int = 0
    draw_keys: Any = None
    # a game with `draw_keys` and `playouts`: `playouts` with each playout's draws from a lent stream, so that
    # search keeps its draws compiled while it mixes playouts in
    playouts_from_streams: Callable[[np.ndarray, Any, list[int]], tuple[np.ndarray, Any]] | None = None
