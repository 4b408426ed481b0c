"""What every entry point shares, the command lines and the DVC stages alike: one-line errors for bad
input (with `PIPELINE_TRACEBACK=1` in the environment, the traceback behind the line first), and torch
threads that follow the free cores so workers never oversubscribe them. It lives
below `pipeline/commands/` so that a stage imports no command line: adding or changing a command then
re-runs no stage of a user's pipeline."""

from __future__ import annotations

import errno
import gc
import logging
import os
import signal
import sys
import threading
import traceback
from contextlib import contextmanager
from functools import wraps
from typing import NoReturn

from pipeline.plumbing.atomic import WriteError
from pipeline.plumbing.clip import clip
from pipeline.plumbing.credentials import mask_passwords
from pipeline.plumbing.failures import (
    BackendError,
    CheckpointError,
    ConfigError,
    DataError,
    GameFault,
    IllegalMove,
    InferenceServerError,
    TrackingError,
    UsageError,
)
from pipeline.plumbing.stores import StoreError
from pipeline.plumbing.threads import use_threads

FULL = (errno.ENOSPC, errno.EDQUOT)  # a full disk, or the user's quota
TRACEBACK_VARIABLE = "PIPELINE_TRACEBACK"  # set (not "0"): a one-line error prints its traceback before it


USER_ERRORS = (
    BackendError,
    ConfigError,
    CheckpointError,
    DataError,
    GameFault,
    IllegalMove,
    InferenceServerError,
    StoreError,
    TrackingError,
    UsageError,
    WriteError,
)


class Terminated(BaseException):
    """SIGTERM, raised wherever the process is. Not an Exception, so that no `except Exception` (an
    Optuna trial, a training loop) carries on after it; and raised by our own handler because
    Lightning's turns SIGTERM into a SystemExit without a code, exit status 0, so a killed sweep looked
    finished to `sweep && sweep --confirm`. Lightning calls a handler it finds in place."""


def _terminate(signum, frame) -> None:
    raise Terminated


@contextmanager
def sigterm_raises():
    """SIGTERM raises `Terminated` in here (the main thread only: elsewhere signals cannot be handled),
    and the handler before it is back afterwards, so a test calling an entry point keeps its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def entry_point(main):
    """Run `main(argv)`; a user error prints one line naming what is wrong and exits with status 1 (its
    traceback before the line only where `TRACEBACK_VARIABLE` asks), Ctrl-C one line and status 130 (the
    shell's convention), SIGTERM one line and status 143."""

    @wraps(main)
    def wrapper(argv: list[str] | None = None) -> None:
        with sigterm_raises():
            run(argv)

    def run(argv: list[str] | None) -> None:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        for noisy in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "alembic"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        # MLflow logs a failed database write with its traceback, then raises it: the error line says it once
        # (the logger says nothing else but that it creates a new store's tables)
        logging.getLogger("mlflow.store.db.utils").setLevel(logging.CRITICAL)
        use_threads(0)  # follow the free cores unless the command or its params say otherwise
        try:
            main(sys.argv[1:] if argv is None else argv)
        except USER_ERRORS as err:
            _refuse(err, clip(mask_passwords(str(err), limit=4000), 300))
        except OSError as err:
            if err.errno not in (errno.ENAMETOOLONG, *FULL):
                raise
            name = clip(str(err.filename), 60)
            if err.errno in FULL:  # a write `atomic.py` does not make: numba's compiled cache, a library's own
                where = f"{name}: cannot be written" if err.filename else "a file cannot be written"
                _refuse(err, f"{where} ({os.strerror(err.errno)}); free some space and run it again")
            _refuse(err, f"{name}: file name too long (at most 255 bytes a name)")  # a player, file or target
        except Exception as err:
            if not _store_refused(err):
                raise
            cause = str(err.__cause__ or err).strip().splitlines() or [type(err).__name__]
            _refuse(err, f"store: {clip(mask_passwords(cause[0], limit=4000), 300)}")  # a read-only SQLite file, say
        except KeyboardInterrupt:
            _stop("interrupted", 130)
        except Terminated:
            _stop("terminated", 128 + signal.SIGTERM)

    return wrapper


def _stop(said: str, status: int) -> NoReturn:
    """Exit a stopped command at once: `gc.freeze` spares the interpreter's last collection over all
    that self-play built, 1.0-1.2 s of a 1.3-1.55 s exit after SIGTERM on 2 cores (issue 82 asks under
    1 s); the exit handlers still run (a worker pool ends, an MLflow run is closed)."""
    print(f"\n{said}", file=sys.stderr)
    gc.freeze()
    sys.exit(status)


def _store_refused(err: Exception) -> bool:
    """A database that refused a read or a write partway through a command (SQLAlchemy's errors, and
    Optuna's wrapping of them), told by class without importing either: one line, not 107."""
    return type(err).__module__.split(".")[0] == "sqlalchemy" or type(err).__name__ == "StorageInternalError"


def _refuse(err: BaseException, line: str) -> None:
    """Print `error: line` on stderr and exit with status 1; first, where `TRACEBACK_VARIABLE` asks, the
    traceback, passwords masked, with the errors it was raised in: `raise ... from None` hides them from
    Python's printing, and the first is where the fault began (a game's own code, say)."""
    if os.environ.get(TRACEBACK_VARIABLE, "0") != "0":
        link, seen = err, set()
        while link is not None and id(link) not in seen:
            seen.add(id(link))
            link.__suppress_context__ = False
            link = link.__cause__ or link.__context__
        print(mask_passwords("".join(traceback.format_exception(err))), end="", file=sys.stderr)
    print(f"error: {line}", file=sys.stderr)
    sys.exit(1)
