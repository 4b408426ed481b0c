"""Pipeline runs of one MLflow experiment side by side: which params differ, where each run ended, and
its per-generation curves drawn together. One parent run is one setting (`pipeline/harness/tracking.py`),
so comparing parents compares settings: what `dvc exp run -S ...` experiments and sweeps ask.
`python -m pipeline compare` writes the page; `notebooks/compare_runs.ipynb` draws the same inline."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pipeline.evaluation.run_report import write_pages
from pipeline.experiments.sections import Plot, Section, plt
from pipeline.harness.tracking import (
    DVC_EXPERIMENT,
    DVC_EXPERIMENT_COMMIT,
    GIT_COMMIT,
    SETTING,
    TrackingError,
    record_experiment_commits,
)
from pipeline.plumbing.stores import check_store, sqlite_file

# Per-generation curves drawn side by side, where the runs logged them (ratings need `evaluate.ratings`).
CURVES = {
    "elo": "Elo of each generation's best network (generation 0 = 0)",
    "gate_score": "gate score of the candidate against the best so far",
    "train_policy_loss": "policy loss after training",
    "train_value_loss": "value loss after training",
    "selfplay_simulations_per_s": "self-play simulations per second",
}


@dataclass
class PipelineRun:
    """One setting's parent run, with its params and the curves of `CURVES` it holds."""

    run_id: str
    name: str
    tags: dict[str, str]
    params: dict[str, str]
    curves: dict[str, list[tuple[int, float]]]  # metric -> (generation, value), by generation

    def final(self, metric: str) -> float | None:
        """The metric at the last generation that has it."""
        points = self.curves.get(metric)
        return points[-1][1] if points else None


def pipeline_runs(tracking_uri: str, experiment: str, names: list[str] | None = None) -> list[PipelineRun]:
    """The experiment's pipeline runs, oldest first (a DVC experiment's name or a run's name picks
    some); a store or experiment that does not exist is a `TrackingError`. Run in the project, it also
    records each DVC experiment's own commit in MLflow, which no stage could (`experiment_commits`)."""
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow import MlflowClient

    store = sqlite_file(tracking_uri)
    if store and not store.exists():  # MLflow would create an empty store
        raise TrackingError(f"no MLflow store at {tracking_uri} (run the pipeline first, or give --tracking-uri)")
    check_store(tracking_uri)  # a server where nothing answers: one line in seconds, not MLflow's 4 minutes
    client = MlflowClient(tracking_uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise TrackingError(f"{tracking_uri}: no MLflow experiment {experiment!r}")
    parents = [
        run
        for run in client.search_runs([found.experiment_id], max_results=5000, order_by=["attributes.start_time ASC"])
        if SETTING in run.data.tags
    ]
    if names:
        parents = [r for r in parents if {r.info.run_name, r.data.tags.get(DVC_EXPERIMENT)} & set(names)]
    if not parents:
        named = f" named {', '.join(names)}" if names else ""
        raise TrackingError(f"{tracking_uri}: no pipeline run{named} in experiment {experiment!r}")
    runs = []
    for run in parents:
        curves = {}
        for metric in CURVES:
            history = {m.step: m.value for m in client.get_metric_history(run.info.run_id, metric)}
            if history:
                curves[metric] = sorted(history.items())
        runs.append(PipelineRun(run.info.run_id, run.info.run_name, dict(run.data.tags), run.data.params, curves))
    record_experiment_commits(client, runs, Path.cwd())
    return runs


def differing_params(runs: list[PipelineRun]) -> list[str]:
    """The params whose values are not the same in every run, sorted."""
    keys = sorted({key for run in runs for key in run.params})
    return [key for key in keys if len({run.params.get(key) for run in runs}) > 1]


def comparison_rows(runs: list[PipelineRun]) -> list[dict]:
    """One row per run: its name, DVC experiment, the commit it ran on and the experiment's own, the
    final value of each curve, then the params that differ between the runs."""
    differing = differing_params(runs)
    rows = []
    for run in runs:
        row = {
            "run": run.name,
            "dvc experiment": run.tags.get(DVC_EXPERIMENT, ""),
            "commit": run.tags.get(GIT_COMMIT, "")[:7],
            "experiment commit": run.tags.get(DVC_EXPERIMENT_COMMIT, "")[:7],
        }
        for metric in CURVES:
            value = run.final(metric)
            row[metric] = "" if value is None else round(value, 4)
        rows.append(row | {key: run.params.get(key, "") for key in differing})
    return rows


MARKERS = ("o-", "s--", "^:", "D-.", "v-", "x--")  # each run its own, so that a curve drawn over another shows


def curves_figure(runs: list[PipelineRun]):
    """One panel per curve that some run holds, one line per run, generation on the x axis."""
    metrics = [metric for metric in CURVES if any(metric in run.curves for run in runs)]
    fig, axes = plt.subplots(1, max(1, len(metrics)), figsize=(3.6 * max(1, len(metrics)), 3.4), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        for i, run in enumerate(runs):
            if metric in run.curves:
                style = MARKERS[i % len(MARKERS)]
                ax.plot(*zip(*run.curves[metric]), style, markersize=6 - 4 * i / max(1, len(runs) - 1), label=run.name)
        ax.set(xlabel="generation", title=metric)
        ax.title.set_fontsize(9)
    if metrics:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def shared_curves(runs: list[PipelineRun]) -> list[str]:
    """The curves two or more runs hold point for point (an experiment that changed only `evaluate`
    shares the baseline's training): on a chart one line hides the other, so the text names them."""
    shared = []
    for metric in CURVES:
        groups: dict[tuple, list[str]] = {}
        for run in runs:
            if run.curves.get(metric):
                groups.setdefault(tuple(run.curves[metric]), []).append(run.name)
        shared += [f"{metric}: {' = '.join(names)}" for names in groups.values() if len(names) > 1]
    return shared


def comparison_sections(runs: list[PipelineRun]) -> list[Section]:
    differing = differing_params(runs)
    text = (
        f"{len(runs)} runs; params that differ: {', '.join(differing) or 'none'}. Final values are at each "
        "run's last generation."
    )
    captions = "; ".join(f"{metric}: {caption}" for metric, caption in CURVES.items())
    same = shared_curves(runs)
    overlaps = f" The same curve, drawn one over the other: {'; '.join(same)}." if same else ""
    plot = Plot("curves", f"Per generation, one line per run. {captions}.{overlaps}", curves_figure(runs))
    return [Section("Runs", text, tables=[comparison_rows(runs)] if runs else []), Section("Curves", plots=[plot])]


def write_comparison(runs: list[PipelineRun], out: Path, experiment: str) -> list[Path]:
    """`compare.html` and `compare.md` beside `curves.png` under `out`."""
    return write_pages(out, "compare", f"Runs of {experiment!r} compared", comparison_sections(runs))
