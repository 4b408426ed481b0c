"""A game's rules compiled over fixed-width int64 rows: what search's compiled expansion runs.

Why: with a small network, creating, judging and encoding each new node in Python costs a third of
self-play's time (docs/results/speed-bench.md, "Where a simulation's time goes"). A game that offers
`CompiledRules` (`base.py`'s `CompilesRules`) lets search do all of it for a whole batch of trees in a
few compiled calls a step (`pipeline/search/mcts.py`'s `_find_leaves_compiled`), with no Python per
node. Only deterministic games: a chance move's outcomes stay with the plain search.

Each compiled function is a numba function (`cache=True`) over the forest's rows (`rows`: one int64
row a node) for the first `count` nodes a batch names; it takes `shape`, the game's constants as an
int64 array, first, so that one compiled function serves every variant of a game:

- `step(shape, rows, parents, actions, children, count)`: row `children[i]` becomes row `parents[i]`
  after `actions[i]`, an action its legal mask allows;
- `mover(shape, rows, nodes, count, out)`: `out[i]`, the seat to move at `nodes[i]`, or -1 where the game is over;
- `legal(shape, rows, nodes, count, out)`: `out[nodes[i], a]`, whether action `a` is legal there (asked of
  finished games too, whose masks are not read);
- `encode(shape, rows, nodes, count, out)`: `out[i]`, the network's planes (float32, the observation
  shape) of `nodes[i]`, as the game's `encode` gives them.

Search calls them from Python, never passes them to a compiled function: numba's cache keeps no
kernel that takes functions as arguments safely across processes.

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
