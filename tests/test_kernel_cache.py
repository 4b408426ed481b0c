"""Compiled kernels' cache (`pipeline/plumbing/kernel_cache.py`): a kernel that calls another file's
kernel runs the callee's new code after that file changes (numba's own cache would keep the old one),
and a package's cache folders do not pile up."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from pipeline.plumbing import kernel_cache

CALLEE = "from pipeline.plumbing.kernel_cache import kernel\n\n\n@kernel\ndef f(x):\n    return x + {step}\n"
CALLER = textwrap.dedent(
    """
    from pipeline.plumbing.kernel_cache import kernel
    from kernels_pkg.callee import f


    @kernel
    def g(x):
        return f(x) * 10
    """
)


@pytest.fixture
def package(tmp_path):
    folder = tmp_path / "kernels_pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "callee.py").write_text(CALLEE.format(step=1))
    (folder / "caller.py").write_text(CALLER)
    return tmp_path


def run_caller(where, cache) -> tuple[int, str]:
    """g(1) in a fresh process, and whether numba loaded g from its cache (its `stats.cache_hits`)."""
    script = "from kernels_pkg.caller import g; print(g(1), sum(g.stats.cache_hits.values()))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(where), *sys.path]), "XDG_CACHE_HOME": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    value, hits = done.stdout.split()
    return int(value), hits


def test_a_kernel_runs_its_callees_new_code_after_the_callees_file_changes(package, tmp_path):
    cache = tmp_path / "cache"
    assert run_caller(package, cache) == (20, "0")  # compiled, then cached
    assert run_caller(package, cache) == (20, "1")  # from the cache
    (package / "kernels_pkg" / "callee.py").write_text(CALLEE.format(step=2))
    assert run_caller(package, cache) == (30, "0")  # numba's own cache answered 20 here
    folders = sorted(path.name.rsplit("-", 1)[0] for path in (cache / "alphazero-pipeline" / "numba").iterdir())
    assert folders == ["kernels_pkg", "kernels_pkg"]  # one a version of the package


def test_a_packages_folders_beyond_the_few_last_used_go_once_idle(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = kernel_cache.cache_root()
    old = time.time() - 2 * kernel_cache.IDLE_S
    for number in range(6):
        (root / f"pipeline-{number:016x}").mkdir(parents=True)
        os.utime(root / f"pipeline-{number:016x}", (old + number, old + number))
    (root / "pipeline-recent").mkdir()  # another checkout's, in use: not idle
    (root / "other-0000000000000000").mkdir()  # another package's
    os.utime(root / "other-0000000000000000", (old, old))
    kernel_cache.package_folder.cache_clear()
    try:
        current = kernel_cache.package_folder("pipeline")
    finally:
        kernel_cache.package_folder.cache_clear()
    kept = sorted(path.name for path in root.iterdir())
    newest_old = [f"pipeline-{number:016x}" for number in (4, 5)]
    assert kept == sorted([current.name, "pipeline-recent", *newest_old, "other-0000000000000000"])
