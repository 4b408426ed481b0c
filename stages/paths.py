"""Where each stage reads and writes, per generation: the single source of the pipeline's file layout
(mirrored by `dvc.yaml`)."""

from pathlib import Path


def best(gen: int) -> Path:
    return Path(f"models/best/gen_{gen}.ckpt")


def candidate(gen: int) -> Path:
    return Path(f"models/candidate/gen_{gen}.ckpt")


def selfplay_data(gen: int) -> Path:
    return Path(f"data/selfplay/gen_{gen}.npz")


def selfplay_parts(gen: int) -> Path:
    """Finished parts of the stage's games, kept only while it runs (`pipeline/jobs/selfplay_parts.py`)."""
    return Path(f"data/selfplay/gen_{gen}.parts")


def saved_fit(gen: int) -> Path:
    """The training stage's fit (or a taught generation 0's) after its last finished epoch, kept only while it runs."""
    return Path(f"models/candidate/gen_{gen}.fit")


def replay(gen: int) -> Path:
    return Path(f"data/replay/gen_{gen}.npz")


def metrics(stage: str, gen: int) -> Path:
    return Path(f"metrics/{stage}/gen_{gen}.json")


START = Path("metrics/start.json")  # compute spent before generation 0: a warm start's, else none
EVALUATION = Path("metrics/evaluate.json")  # every experiment's results, for the report
SUMMARY = Path("metrics/summary.json")  # the headline numbers of `dvc metrics show`
MATCHES = Path("data/matches")  # finished evaluation matches, kept across runs: no DVC output
REPORTS = Path("reports")
