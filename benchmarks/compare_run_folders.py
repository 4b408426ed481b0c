"""Whether two `dvc repro` run folders hold the same run: every self-play and replay `.npz` array, every
checkpoint's weights and every metrics file equal, timings aside (and `rollouts` read as `simulations`,
its name since issue 37). How a regroup of the code is shown to change no game, network or figure.

Usage: python benchmarks/compare_run_folders.py BEFORE AFTER"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

a, b = Path(sys.argv[1]), Path(sys.argv[2])
TIMING = ("seconds", "per_s", "per_min", "hours", "wall", "time")
RENAMED = {"rollouts": "simulations"}
problems, counts = [], {"npz": 0, "ckpt": 0, "json": 0}


def same_json(x, y, where):
    if isinstance(x, dict) and isinstance(y, dict):
        x = {RENAMED.get(k, k): v for k, v in x.items()}
        y = {RENAMED.get(k, k): v for k, v in y.items()}
        for k in sorted(set(x) | set(y)):
            if any(t in k for t in TIMING):
                continue
            if k not in x or k not in y:
                problems.append(f"{where}.{k}: only in one")
            else:
                same_json(x[k], y[k], f"{where}.{k}")
    elif isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            problems.append(f"{where}: lengths {len(x)} != {len(y)}")
        for i, (p, q) in enumerate(zip(x, y)):
            same_json(p, q, f"{where}[{i}]")
    elif x != y:
        problems.append(f"{where}: {x!r} != {y!r}")


for path in sorted(a.rglob("*")):
    rel = path.relative_to(a)
    if rel.parts[0] not in ("data", "models", "metrics") or not path.is_file() or "matches" in rel.parts:
        continue
    other = b / rel
    if not other.exists():
        problems.append(f"{rel}: missing in {b}")
        continue
    if path.suffix == ".npz":
        x, y = np.load(path), np.load(other)
        for k in set(x.files) | set(y.files):
            if k not in x.files or k not in y.files or not np.array_equal(x[k], y[k]):
                problems.append(f"{rel}:{k} differs")
        counts["npz"] += 1
    elif path.suffix == ".ckpt":
        x = torch.load(path, map_location="cpu", weights_only=False)
        y = torch.load(other, map_location="cpu", weights_only=False)
        sx, sy = x.get("state_dict", x), y.get("state_dict", y)
        for k in sx:
            if hasattr(sx[k], "shape") and not torch.equal(sx[k], sy[k]):
                problems.append(f"{rel}:{k} differs")
        counts["ckpt"] += 1
    elif path.suffix == ".json":
        same_json(json.loads(path.read_text()), json.loads(other.read_text()), str(rel))
        counts["json"] += 1
print(counts)
print(f"{len(problems)} differences")
for p in problems[:40]:
    print(" ", p)
