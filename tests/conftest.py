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
