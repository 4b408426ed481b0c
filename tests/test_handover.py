"""A pool's workers get their start-up arguments through a file (`plumbing/handover.py`), so that a
worker still importing does not hold the parent from starting the next one."""

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import held_import

from pipeline.plumbing.handover import handed_over


def test_a_pools_workers_start_at_once_however_large_their_arguments(tmp_path, monkeypatch):
    monkeypatch.setenv("HELD_IMPORT_FOLDER", str(tmp_path))
    weights = bytes(8 << 20)  # a network's weights: far more than the 64 KB pipe that spawns a worker
    with handed_over(held_import.started, (weights,)) as (initializer, initargs):
        folder = Path(initargs[0]).parent
        assert folder.stat().st_mode & 0o077 == 0, "only this user reads the arguments (a server's key)"
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(2, context, initializer=initializer, initargs=initargs) as pool:
            futures = [pool.submit(os.getpid) for _ in range(2)]
            deadline = time.monotonic() + 90
            while len(list(tmp_path.glob("importing-*"))) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            importing = len(list(tmp_path.glob("importing-*")))
            (tmp_path / "go").touch()
            assert importing == 2, "the second worker waited for the first to finish starting"
            assert all(future.result(timeout=120) for future in futures)
    assert not folder.exists(), "the arguments' file goes with the block"
