"""The one place that writes files: to a temporary name beside the target, then an atomic rename, so
a killed stage never leaves a half-written output that a later stage could read as valid.

A kill can still leave the temporary file itself; its name (`.<target>.<8 random characters>.tmp`) is
recognisable, so a stage removes such leftovers from its output folders before it starts. A write that
the system refuses (a full disk, a read-only folder) is a `WriteError` naming the target: one line for
the user, and the target as it was before."""

from __future__ import annotations

import json
import math
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

LEFTOVER = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")  # also matches the tempfile.mkstemp names of older versions


class WriteError(OSError):
    """The system refused to write an output: its path and the system's reason."""


@contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _new_temporary(path)
        yield tmp
        os.replace(tmp, path)
    except BaseException as err:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        if isinstance(err, OSError) and not isinstance(err, WriteError):
            raise WriteError(f"{path}: cannot be written ({err.strerror or err})") from None
        raise


def _new_temporary(path: Path) -> Path:
    """An empty file beside `path`, created with mode 0666 so the user's umask decides its permissions
    as for any other new file (tempfile.mkstemp would make every output 0600)."""
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue


def remove_leftovers(*folders: Path | str) -> None:
    """Delete temporary files that killed writers left in `folders` (not their subfolders). Call it only
    where no other process is writing, such as at the start of a DVC stage: DVC would count a leftover
    in an output or dependency folder as a change."""
    for folder in map(Path, folders):
        if folder.is_dir():
            for entry in folder.iterdir():
                if LEFTOVER.fullmatch(entry.name) and entry.is_file():
                    entry.unlink(missing_ok=True)


def write_json(path: Path | str, data) -> None:
    """`data` as standard JSON: a float that is not a number (an interval of one game) is written `null`,
    where Python's own `NaN` would stop other readers."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(_finite(data), indent=2, sort_keys=True, allow_nan=False) + "\n")


def _finite(data):
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(value) for value in data]
    return data


def write_text(path: Path | str, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_bytes(path: Path | str, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_npz(path: Path | str, **arrays: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **arrays)
