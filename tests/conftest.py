import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # test helpers such as reference_search
# ONNX exports of the tests' networks (pipeline/nets/onnx_runtime.py) stay out of the user's cache
os.environ["ALPHAZERO_ONNX_CACHE"] = str(Path(tempfile.gettempdir()) / "alphazero-pipeline-tests-onnx")


@pytest.fixture
def small_disk(tmp_path):
    """A 24 MB tmpfs: room for the store's check (16 MB free) and little more. Mounting takes root."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here ({mounted.stderr.decode().strip() or 'not root'})")
    yield disk
    subprocess.run(["umount", str(disk)], check=True)


def pytest_collection_modifyitems(config, items):
    """The files of slow tests (real DVC pipelines, Ray, servers: minutes each) first, so that `pytest -n`
    starts them while the short files fill the other cores, rather than ending on one of them alone.
    pytest-xdist hands out whole files in this order (`--dist loadfile --no-loadscope-reorder` in
    pyproject.toml; its default order, by the number of tests a file holds, put them last)."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)  # stable: each file's own order is kept
