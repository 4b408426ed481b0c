"""A spawned worker's start-up arguments through a file, not through the pipe that starts it.

`spawn` writes a child's initializer and its arguments into a pipe (64 KB on Linux), which the child
reads only after importing the parent's main module and the modules the arguments name. Larger arguments
(a network's weights: megabytes) held the parent at that write until then, so a pool's workers started one
after another, a child's imports apart: about half a second under `python -m pipeline`, 3.6 s under a
script that imports torch at its top (a 128-game self-play ran on one worker; the 16th of 16 would start a
minute late). With the arguments in a file, the parent writes a few hundred bytes a child and every child
imports at once."""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def handed_over(function: Callable, args: tuple) -> Iterator[tuple[Callable, tuple]]:
    """(initializer, initargs) for a process pool whose workers each run `function(*args)` first;
    `args` are pickled once, into a temporary folder that lives as long as the block and that only this
    user may read (`mkdtemp`: an inference server's key may be among them)."""
    with tempfile.TemporaryDirectory(prefix="alphazero-workers-") as folder:
        path = Path(folder) / "start.pickle"
        path.write_bytes(pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL))
        yield run_handed_over, (str(path),)


def run_handed_over(path: str) -> None:
    """A worker's initializer: the function and arguments `handed_over` wrote to `path`."""
    function, args = pickle.loads(Path(path).read_bytes())
    function(*args)
