"""A module whose import, in a spawned worker, waits until the test that started it says go: the worker
is held at start-up, as a worker importing torch is for seconds (test_handover.py). Its import in the
test's own process is not held."""

import multiprocessing
import os
import time
from pathlib import Path

if multiprocessing.parent_process() is not None:
    folder = Path(os.environ["HELD_IMPORT_FOLDER"])
    (folder / f"importing-{os.getpid()}").touch()
    deadline = time.monotonic() + 120  # a test that never says go fails on its own wait, not here
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def started(weights: bytes) -> None:
    """A worker's initializer, with arguments as large as a network's."""
