"""Compiled kernels (`@kernel`: numba's `njit(cache=True)`) whose cache is dropped when any kernel their
package could call changes.

Why: numba compiles a kernel's callees into it and keys its cache on the kernel's own file alone. With
`callee.py` (`f(x) = x + 1`) and `caller.py` (`g(x) = f(x) * 10`), change `f` to `x + 2` and a new process
still gets `g(1) == 20` from the cache: after a `git pull` that changed Kingdomino's `rule_kernels.py` but
not `rows.py`, search would have gone on running the old rules. So each package's kernels are cached in
a folder of their own, named by a digest of every file of that package (and of this library, which a
game's kernels may call) that defines kernels or mentions numba: any change there starts a fresh folder,
and only that package's kernels compile again, once.

The folders live under numba's own `NUMBA_CACHE_DIR` where the user set one, else under
`$XDG_CACHE_HOME/alphazero-pipeline/numba`; a package's few most recently used are kept. A kernel defined
outside a package or module that Python can find again (a script's `__main__`) keeps numba's own cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import time
from functools import cache
from pathlib import Path

LIBRARY = __name__.partition(".")[0]
KEPT_FOLDERS = 4  # a package's folders kept: the current one and those of a few recent checkouts
MARKS = (b"numba", b"@kernel")  # what a file whose kernels may be called mentions
IDLE_S = 3600  # an older folder unused this long goes; a younger one may be another checkout's, running


def kernel(function):
    """`function` compiled by numba (`njit`), its machine code cached in its package's folder."""
    import numba

    folder = package_folder(function.__module__.partition(".")[0])
    before = numba.config.CACHE_DIR
    if folder is not None:
        numba.config.CACHE_DIR = str(folder)  # numba reads it as it sets the function's cache up, here
    try:
        return numba.njit(cache=True)(function)
    finally:
        numba.config.CACHE_DIR = before


def cache_root() -> Path:
    if root := os.environ.get("NUMBA_CACHE_DIR"):
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "alphazero-pipeline" / "numba"


@cache
def package_folder(package: str) -> Path | None:
    """The cache folder of the kernels of top-level package (or module) `package`, made and marked as
    used; None where Python cannot find it again."""
    digests = [_kernels_digest(name) for name in dict.fromkeys((LIBRARY, package))]
    if None in digests:
        return None
    root = cache_root()
    folder = root / f"{package}-{hashlib.sha256(''.join(digests).encode()).hexdigest()[:16]}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        os.utime(folder)
        _prune(root, package)
    except OSError:
        return None  # a cache numba cannot write either: it compiles each process, as it would
    return folder


@cache
def _kernels_digest(name: str) -> str | None:
    """The digest of the package's (or module's) source files that define kernels or mention numba, each
    by its name within the package and its text; None where Python cannot find it. Once a process: the
    library's is part of every package's folder."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or (spec.origin is None and not spec.submodule_search_locations):
        return None
    if spec.submodule_search_locations:
        found = [
            (str(path.relative_to(where)), path)
            for where in spec.submodule_search_locations
            for path in Path(where).rglob("*.py")
        ]
    else:
        found = [(Path(spec.origin).name, Path(spec.origin))]
    digest = hashlib.sha256()
    for relative, path in sorted(found):
        text = path.read_bytes() if path.is_file() else b""
        if any(mark in text for mark in MARKS):
            digest.update(f"{relative}\0".encode() + text)
    return digest.hexdigest()


def _prune(root: Path, package: str) -> None:
    """A package's folders beyond the `KEPT_FOLDERS` most recently used, once idle `IDLE_S`, removed."""
    used = [(when, path) for path in root.glob(f"{package}-*") if (when := _mtime(path)) is not None]
    for when, stale in sorted(used, reverse=True)[KEPT_FOLDERS:]:
        if time.time() - when > IDLE_S:
            shutil.rmtree(stale, ignore_errors=True)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile by another process's pruning
        return None
