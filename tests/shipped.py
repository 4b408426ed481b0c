"""params.yaml as the repository ships it, for the tests that build on it: git's committed copy, not the
workspace's, so that a user who copied an example over params.yaml (as the README suggests) still tests
the shipped pipeline. Outside a git checkout (an unpacked archive), the file itself."""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


@cache
def shipped_params_text() -> str:
    try:
        shown = subprocess.run(["git", "show", "HEAD:params.yaml"], cwd=ROOT, capture_output=True, text=True)
    except OSError:  # no git on this machine
        shown = None
    return shown.stdout if shown is not None and shown.returncode == 0 else (ROOT / "params.yaml").read_text()


def shipped_params() -> dict:
    """A fresh dict each call: callers change it."""
    return yaml.safe_load(shipped_params_text())
