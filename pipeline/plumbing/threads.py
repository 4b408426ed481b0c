"""Inference and training threads (torch's, ONNX Runtime's) that follow the cores other processes leave free.

Why: torch's intra-op threads spin at every barrier, and on small boards every op is tiny, so when
another process takes one of the cores, a thread that loses its core stalls the others at each op.
Measured on 2 cores with one busy process beside (NOTES.md, "Threads"): training with 2 threads fell
to 3-10% of its quiet speed, with 1 thread it kept about its one-core speed. On a quiet machine 2
threads are faster. So `threads: 0` starts with every core and, about once a second (checked from
the hot loops: each network batch, each training step), counts the CPU time other processes took
and keeps only the cores they leave free, climbing back when they go quiet.
"""

from __future__ import annotations

import os
import sys
import time

import psutil

CHECK_EVERY_S = 1.0
# A core counts as taken when others use more than half of it: with our 2 threads and one busy
# process beside them, the busy process gets about 2/3 of a core.
TAKEN_FROM = 0.5


class CoreFollower:
    """Sets torch's thread count to the cores not used by other processes, at most `most`."""

    def __init__(self, most: int):
        import torch

        self.most = most
        self.threads = most
        self._process = psutil.Process()
        self._last = self._sample()
        torch.set_num_threads(most)

    def _sample(self) -> tuple[float, float, float]:
        system = psutil.cpu_times()
        busy = sum(system) - system.idle - getattr(system, "iowait", 0.0) - getattr(system, "guest", 0.0)
        own = self._process.cpu_times()
        return time.monotonic(), busy, own.user + own.system

    def others_busy(self) -> float:
        """Cores the rest of the machine kept busy since the last call."""
        now = self._sample()
        (then, busy_then, own_then), self._last = self._last, now
        elapsed = max(now[0] - then, 1e-6)
        return max(0.0, ((now[1] - busy_then) - (now[2] - own_then)) / elapsed)

    def check(self) -> int:
        """The threads to run with now (torch's are set to them)."""
        if time.monotonic() - self._last[0] < CHECK_EVERY_S:
            return self.threads
        free = self.most - int(self.others_busy() + (1 - TAKEN_FROM))
        self.threads = max(1, min(self.most, free))
        import torch

        if self.threads != torch.get_num_threads():
            torch.set_num_threads(self.threads)
        return self.threads


_wanted = 0  # what the command asked for: 0 follows the free cores
_follower: CoreFollower | None = None


def use_threads(threads: int) -> None:
    """`threads` > 0: exactly that many threads; 0: follow the free cores (module docstring), from the
    first hot-loop call on. torch is never imported here: a process that runs its networks in ONNX
    Runtime (a pool's worker) need not load it; where torch comes later, the first hot-loop call sets it."""
    global _wanted, _follower
    _wanted, _follower = threads, None
    _set_torch_threads()


def _set_torch_threads() -> None:
    torch = sys.modules.get("torch")
    if _wanted and torch is not None and torch.get_num_threads() != _wanted:
        torch.set_num_threads(_wanted)


def follow_free_cores() -> int:
    """Called from the hot loops; re-checks the other processes' load about once a second and returns
    the threads to run with now, for runtimes that take a thread count per call (ONNX Runtime)."""
    global _follower
    if _wanted:
        _set_torch_threads()
        return _wanted
    if _follower is None:
        _follower = CoreFollower(os.cpu_count() or 1)
    return _follower.check()
