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

from pipeline import champions
from pipeline.config import load_params
from pipeline.jobs.replay import DataError
from pipeline.jobs.strength_curve import cumulative_compute

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


def run_compute(run: Path) -> list[dict]:
    """The compute behind each finished generation's best network of the run folder `run`, generation 0
    first: what its curve is drawn against, and what a warm start from one of its networks carries."""
    params = load_params(run / "params.yaml")
    start_file = run / "metrics" / "start.json"  # init's record; runs older than it: their warm start's
    start = _read_metrics(start_file) if start_file.exists() else compute_before(params.warm_start, run)
    metrics = run_metrics(run)
    return cumulative_compute(metrics["selfplay"], metrics["train"], metrics["gate"], params.search.rollouts, start)


def compute_before(warm_start: str | None, folder: Path = Path(".")) -> dict:
    """The self-play simulations and wall hours behind generation 0 of a run in `folder`, where its
    strength curve begins: for a shipped champion what trained it (its card); for the best network of
    another run's generation N (`RUN/models/best/gen_N.ckpt`), RUN's compute up to N, warm starts
    before it included; for a random network zero, and for any other file zero with a warning."""
    if warm_start is None:
        return dict(NOTHING)
    name = champions.shipped_name(warm_start)
    if name is not None:
        return champions.spent(name)
    path = folder / warm_start
    generation = re.fullmatch(r"gen_(\d+)\.ckpt", path.name)
    run = path.parents[2] if len(path.parents) > 2 else path.parent
    if generation and path.parent.parts[-2:] == ("models", "best") and (run / "params.yaml").is_file():
        compute = run_compute(run)
        if int(generation[1]) < len(compute):
            return {key: compute[int(generation[1])][key] for key in NOTHING}
    log.warning(
        "warm_start: %s is not the best network of a finished generation of a run folder "
        "(RUN/models/best/gen_N.ckpt beside RUN/metrics); the compute behind it counts as 0",
        warm_start,
    )
    return dict(NOTHING)


def _read_metrics(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: cannot read metrics ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: not a metrics file (a JSON object expected)")
    return data
