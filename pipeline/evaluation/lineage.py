"""What a run's networks cost: the self-play simulations and wall hours behind each generation of a run
folder, and what a warm start carries into the run it begins, from a shipped champion or from another
run's network, so a strength curve that goes on from an earlier run starts where that run ended.

Apart from `strength_curve.py`, which the evaluate and report stages import: this reads shipped
champions' cards and other folders, which those stages must not depend on."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import yaml

from pipeline import champions
from pipeline.config import SearchParams
from pipeline.evaluation.strength_curve import cumulative_compute
from pipeline.jobs.replay import DataError

log = logging.getLogger(__name__)

NOTHING = {"simulations": 0, "hours": 0.0}


def run_metrics(run: Path) -> dict[str, list[dict]]:
    """The selfplay, train and gate metrics of every finished generation of the run folder `run` (where a
    `dvc repro` ran), generation 1 first."""
    metrics = {stage: [] for stage in ("selfplay", "train", "gate")}
    generation = 1
    while (run / "metrics" / "gate" / f"gen_{generation}.json").exists():
        for stage, rows in metrics.items():
            rows.append(_read_metrics(run / "metrics" / stage / f"gen_{generation}.json"))
        generation += 1
    return metrics


def run_compute(run: Path, visited: frozenset[Path] = frozenset()) -> list[dict]:
    """The compute behind each finished generation's best network of the run folder `run`, generation 0
    first: what its curve is drawn against, and what a warm start from one of its networks carries.
    `visited`: the runs whose warm starts led here (a loop counts 0)."""
    warm_start, simulations = _lineage_params(run / "params.yaml")
    start_file = run / "metrics" / "start.json"  # init's record; runs older than it: their warm start's
    if start_file.exists():
        start = _read_metrics(start_file, required=tuple(NOTHING))
    else:
        start = compute_before(warm_start, run, visited)
    metrics = run_metrics(run)
    try:
        return cumulative_compute(metrics["selfplay"], metrics["train"], metrics["gate"], simulations, start)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as err:
        raise DataError(f"{run / 'metrics'}: a metrics file lacks a usable {err}") from None


def compute_before(warm_start: str | None, folder: Path = Path("."), visited: frozenset[Path] = frozenset()) -> dict:
    """The self-play simulations and wall hours behind generation 0 of a run in `folder`, where its
    strength curve begins: for a shipped champion what trained it (its card); for the best network of
    another run's generation N (`RUN/models/best/gen_N.ckpt`), RUN's compute up to N, warm starts
    before it included; for a random network zero, and for any other file zero with a warning."""
    if warm_start is None:
        return dict(NOTHING)
    name = champions.shipped_name(warm_start)
    if name is not None:
        return champions.spent(name)
    visited = visited | {folder.resolve()}
    path = folder / warm_start
    generation = re.fullmatch(r"gen_(\d+)\.ckpt", path.name)
    run = path.parents[2] if len(path.parents) > 2 else path.parent
    if generation and path.parent.parts[-2:] == ("models", "best") and (run / "params.yaml").is_file():
        if run.resolve() in visited:
            log.warning("warm_start: %s: the warm starts lead back to %s; its compute counts as 0", warm_start, run)
            return dict(NOTHING)
        compute = run_compute(run, visited)
        if int(generation[1]) < len(compute):
            return {key: compute[int(generation[1])][key] for key in NOTHING}
    log.warning(
        "warm_start: %s is not the best network of a finished generation of a run folder "
        "(RUN/models/best/gen_N.ckpt beside RUN/metrics); the compute behind it counts as 0",
        warm_start,
    )
    return dict(NOTHING)


def _lineage_params(path: Path) -> tuple[str | None, int]:
    """A run's `warm_start` and `search.simulations` (`search.rollouts` before the rename), read leniently:
    the run may be of older or newer code."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise DataError(f"{path}: cannot read params ({type(err).__name__})") from None
    data = data if isinstance(data, dict) else {}
    search = data.get("search") if isinstance(data.get("search"), dict) else {}
    simulations = search.get("simulations", search.get("rollouts", SearchParams().simulations))
    warm_start = data.get("warm_start")
    if not (isinstance(warm_start, str | None) and isinstance(simulations, int) and not isinstance(simulations, bool)):
        raise DataError(f"{path}: warm_start must be a name or path and search.simulations a whole number")
    return warm_start, simulations


def _read_metrics(path: Path, required: tuple[str, ...] = ()) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: cannot read metrics ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: not a metrics file (a JSON object expected)")
    missing = [key for key in required if not isinstance(data.get(key), int | float)]
    if missing:
        raise DataError(f"{path}: expected numbers {', '.join(missing)}")
    return data
