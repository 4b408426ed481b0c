"""Strength against compute: the Connect-4 mistakes of every generation's best network beside the
self-play simulations and wall hours spent to reach it (the report's curve and `benchmark_curve`).

Scoring a network on Pons' sets costs minutes at real budgets, so each generation's rows are kept on
disk under a key of its weights and the benchmark's settings: a generation that promoted nothing
(same weights as before) or a curve drawn again costs nothing, and an interrupted scoring resumes."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

from pipeline.plumbing.atomic import write_text

log = logging.getLogger(__name__)


def cached_score(digest: str, score: Callable[[], list[dict]], settings: dict, cache_dir: Path) -> list[dict]:
    """The rows of `score()` for the network with weights `digest` under `settings`, computed once and
    kept in `cache_dir`; a corrupt entry is reported and scored again."""
    text = json.dumps({"weights": digest, **settings}, sort_keys=True)
    path = Path(cache_dir) / f"{hashlib.sha256(text.encode()).hexdigest()}.json"
    rows = _read_rows(path)
    if rows is None:
        rows = score()
        write_text(path, json.dumps(rows, sort_keys=True) + "\n")
    return rows


def _read_rows(path: Path) -> list[dict] | None:
    if not path.exists():
        return None
    try:
        rows = json.loads(path.read_text())
        if not (isinstance(rows, list) and rows and all(isinstance(r, dict) and "percent" in r for r in rows)):
            raise ValueError("not a list of benchmark rows")
    except (ValueError, UnicodeDecodeError) as err:
        log.warning("benchmark cache: ignoring corrupt entry %s (%s); scoring again", path, err)
        return None
    return rows


def cumulative_compute(
    selfplay: list[dict], train: list[dict], gate: list[dict], per_move: int, start: dict | None = None
) -> list[dict]:
    """Self-play simulations and wall hours (self-play, training and gating) spent up to each generation,
    from the stages' metrics files; generation 0 costs `start` (a warm start's compute), else nothing.

    Runs recorded before self-play metrics counted simulations are estimated as moves x `per_move`,
    exact without playout cap randomization; gating time is 0 where it was not recorded."""
    totals = [{"generation": 0, **(start or {"simulations": 0, "hours": 0.0})}]
    for generation, (s, t, g) in enumerate(zip(selfplay, train, gate), start=1):
        simulations = s.get("simulations", round(s["games"] * s["mean_game_length"] * per_move))
        train_seconds = t["samples"] * len(t["epochs"]) / t["samples_per_s"]
        seconds = s["seconds"] + train_seconds + g.get("gate_seconds", 0.0)
        totals.append(
            {
                "generation": generation,
                "simulations": totals[-1]["simulations"] + simulations,
                "hours": totals[-1]["hours"] + seconds / 3600,
            }
        )
    return totals


def curve(scores: list[dict], compute: list[dict]) -> list[dict]:
    """Each scored row with the compute spent to reach its generation (generations without metrics dropped)."""
    spent = {c["generation"]: c for c in compute}
    return [{**spent[r["generation"]], **r} for r in scores if r["generation"] in spent]
