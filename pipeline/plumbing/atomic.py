"""The one place that writes files: to a temporary name beside the target, then an atomic rename, so
a killed stage never leaves a half-written output that a later stage could read as valid.

A kill can still leave the temporary file itself; its name (`.<target>.<8 random characters>.tmp`) is
recognisable, so a stage removes such leftovers from its output folders before it starts. A write that
the system refuses (a full disk, a read-only folder) is a `WriteError` naming the target: one line for
the user, and the target as it was before. So is a target that is no regular file (`/dev/null`, a named
pipe, a folder), refused before anything is written: the rename would put a file in its place."""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

LEFTOVER = re.compile(r"\..+\.[a-z0-9_]{8}\.tmp")  # also matches the tempfile.mkstemp names of older versions


class WriteError(OSError):
    """The system refused to write an output: its path and the system's reason."""


# what stands at a target that is no regular file, as an error line names it
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISSOCK, "a socket"),
)


def writable_target(path: Path | str) -> Path:
    """The file that a write to `path` replaces, refused with a `WriteError` where something other than a
    regular file stands there: the rename replaces whatever it finds, so `export ... /dev/null` run as root
    would leave a regular file where the device was. A symbolic link is followed, as any other program
    writing a file does: the file it names is replaced and the link stays (a dotfile linked from a
    dotfiles repository stays linked). A command calls it before its work, so that a target refused
    costs nothing."""
    path = Path(path)
    target = Path(os.path.realpath(path))  # Path.resolve raises RuntimeError on a loop of links
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target
    except OSError as err:
        raise WriteError(f"{path}: cannot be written ({err.strerror or err})") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise WriteError(f"{path}: is {kind}; expected a regular file to write, or a new name")
    return target


def can_write(path: Path | str) -> Path:
    """`writable_target`, and a file made and removed in its folder, or in the nearest folder above it
    that exists (nothing is made that the command would leave behind): a folder the user may not write,
    or a read-only disk, is one line before the command's work (an export ran for 8 s, then failed)."""
    target = writable_target(path)
    folder = next(folder for folder in target.parents if folder.exists())
    try:
        _new_temporary(folder / target.name).unlink()
    except OSError as err:
        raise WriteError(f"{path}: cannot be written ({err.strerror or err})") from None
    return target


@contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    """A temporary path beside `path`'s `writable_target`, renamed onto it when the block ends."""
    path = Path(path)
    tmp = None
    try:
        target = writable_target(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _new_temporary(target)
        yield tmp
        os.replace(tmp, target)
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
