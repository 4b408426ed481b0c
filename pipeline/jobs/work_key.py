"""The name of saved work that a stopped stage may pick up again (a self-play part, a training fit):
a hash of everything that decides the work, the project's code and the libraries' versions included,
so work saved under other inputs is never reused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch

import pipeline


def code_digest() -> str:
    """A hash of the project's code: a fix to search, self-play or training retires the work saved before it."""
    digest = hashlib.sha256()
    root = Path(pipeline.__file__).parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def work_key(identity: dict) -> str:
    """A hash of `identity` (plain JSON values) with the code and the libraries' versions: the name of
    saved work (a self-play part, a training epoch) that only the same inputs may reuse."""
    libraries = {"torch": torch.__version__, "numpy": np.__version__}  # their arithmetic decides games too
    text = json.dumps({"code": code_digest(), "libraries": libraries, **identity}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
