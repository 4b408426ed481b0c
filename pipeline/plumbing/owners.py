"""Which process owns a piece of work (a sweep trial, a stage's MLflow run), and whether that process
is gone, so that a re-run takes the work over at once instead of waiting out a heartbeat. Only
processes of this host can be checked: an owner elsewhere is presumed alive."""

from __future__ import annotations

import multiprocessing
import os
import socket
import threading
import time

import psutil


def current() -> str:
    """`host:pid:start`; the start time tells a dead owner from a later process that reuses its pid."""
    return f"{socket.gethostname()}:{os.getpid()}:{_started(os.getpid())}"


def is_dead(owner: str) -> bool:
    """True only for an owner of this host whose process has ended (a zombie counts as ended)."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit() or parts[0] != socket.gethostname():
        return False
    return _started(int(parts[1])) != parts[2]


def _started(pid: int) -> str | None:
    """The process's start time; None where no live process has this pid (a zombie has ended)."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return f"{process.create_time():.2f}"
    except psutil.NoSuchProcess:
        return None


def exit_with_parent() -> None:
    """End this process (a pool worker, the inference server) once the process that started it is
    gone: where the out-of-memory killer took a stage, its workers (hundreds of MB each) would
    otherwise wait for work that never comes, for good. Checked once a second by a daemon thread."""
    started_by = multiprocessing.parent_process()  # its pid holds even where that parent died before this ran
    parent = started_by.pid if started_by is not None else os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
