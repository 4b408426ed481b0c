"""Old spellings of renamed params, still read so that users' params files work: one word,
`simulations`, names every search budget. Each old key read prints one deprecation line."""

from __future__ import annotations

import sys

from pipeline.plumbing.failures import ConfigError

RENAMED = {
    "search.rollouts": "search.simulations",
    "selfplay.fast_rollouts": "selfplay.fast_simulations",
    "sweep.eval_rollouts": "sweep.eval_simulations",
}


def current_path(path: str) -> str:
    """A dotted params path under its current name (a sweep space or an old study's trial may use an old one)."""
    return RENAMED.get(path, path)


def current_paths(values: dict) -> dict:
    """Values by dotted path (an Optuna trial's params), every path under its current name."""
    return {current_path(path): value for path, value in values.items()}


def renamed(data: dict, source: str) -> dict:
    """`data` with renamed keys moved to their new names, sweep space paths included."""
    data = {key: dict(value) if isinstance(value, dict) else value for key, value in data.items()}
    for old, new in RENAMED.items():
        section, old_key = old.split(".")
        new_key = new.split(".")[1]
        part = data.get(section)
        if isinstance(part, dict) and old_key in part:
            if new_key in part:
                raise ConfigError(f"{source}: {old} and {new} name one param; keep {new} only")
            part[new_key] = part.pop(old_key)
            _deprecated(source, old, new)
    space = data.get("sweep", {}).get("space") if isinstance(data.get("sweep"), dict) else None
    if isinstance(space, dict) and any(path in RENAMED for path in space):
        for path in [p for p in space if p in RENAMED]:
            _deprecated(source, f"sweep.space: {path}", current_path(path))
        data["sweep"]["space"] = {current_path(path): dim for path, dim in space.items()}
    return data


def _deprecated(source: str, old: str, new: str) -> None:
    print(f"{source}: {old} is deprecated, read as {new}; rename it", file=sys.stderr)
