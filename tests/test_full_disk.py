"""A full disk where the project's own atomic writes are not the writer (numba's compiled cache on a
first run, a library's files) is one line, not numba's 154-line traceback (issue 74)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_full_disk_under_numbas_cache_is_one_line(small_disk):
    with open(small_disk / "fill", "ab", buffering=0) as fill:  # the whole disk
        try:
            while True:
                fill.write(b"\0" * 2**16)
        except OSError:
            pass
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(small_disk / "numba")}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "solve", "connect4", "--weak"],
        input="4453\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: a file cannot be written (No space left on device); free some space and run it again"
    ]
