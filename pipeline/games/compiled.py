"""A game's rules compiled over fixed-width int64 rows: what search's compiled expansion runs.

Why: with a small network, creating, judging and encoding each new node in Python costs a third of
self-play's time (docs/results/speed-bench.md, "Where a simulation's time goes"). A game that offers
`CompiledRules` (`base.py`'s `CompilesRules`) lets search do all of it for a whole batch of trees in one
compiled call (`pipeline/search/tree_kernels.py`'s `expand_leaves`), with no Python per node. Only
deterministic games: a chance move's outcomes stay with the plain search.

Each compiled function is a numba function taking `shape`, the game's constants as an int64 array,
first, so that one compiled function serves every variant of a game:

- `step(shape, row, action, out)`: `out` becomes the row after `action`, an action the row's legal mask allows;
- `mover(shape, row) -> int`: the seat to move, or -1 where the game is over;
- `legal(shape, row, out)`: `out[a]` says whether action `a` is legal (a bool row of `num_actions`);
- `encode(shape, row, out)`: the network's planes (float32, the observation shape), as `encode` gives them.

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
