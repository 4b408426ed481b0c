"""A sweep's report: the recommended params (confirmed by re-training, when `sweep --confirm` ran) as a
params file `dvc repro` takes, every trial as CSV, and the plots people look at first (optimisation
history, parameter importances, slices of the paper's three parameters, per-generation strength of every
trial, and the Pareto front with two objectives)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import optuna  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402
from optuna.visualization import matplotlib as plots  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402

from pipeline.config import Params, current_paths  # noqa: E402
from pipeline.plumbing.atomic import atomic_path, write_text  # noqa: E402
from pipeline.plumbing.credentials import mask_passwords  # noqa: E402
from pipeline.sweeps.confirmation import WITHOUT  # noqa: E402
from pipeline.sweeps.space import trial_params  # noqa: E402
from pipeline.sweeps.study import BASELINE, CONFIRMED, FINISHED, VERSUS, best_trial  # noqa: E402

PAPER_PARAMS = ("search.c_puct", "search.dirichlet_alpha", "search.simulations")


def implied_values(params: Params, tuned: dict) -> dict:
    """Tuned values plus what they imply: the self-play games rescaled to the same cost where simulations
    were tuned. Nothing untuned: the sweep's own games, pasted into another params file, would cut its
    self-play (a toy study's 24 games where params.yaml plays 300)."""
    values = current_paths(tuned)
    if "search.simulations" in values:
        values.setdefault("selfplay.games", trial_params(params, values).selfplay.games)
    return values


def baseline_values(study: optuna.Study) -> dict:
    return next(t.params for t in study.get_trials(deepcopy=False) if t.user_attrs.get(BASELINE))


def shown(figure: float | None) -> str:
    """A figure of the report; one the JSON files hold as null (an interval over one seed or game) is n/a."""
    return "n/a" if figure is None or figure != figure else f"{figure:.3f}"


def confirmation_lines(figures: dict) -> list[str]:
    """The report's lead: each candidate's effect against the baseline over training seeds and games."""
    base = figures["baseline"]
    lines = [
        "",
        "## Confirmation: the top settings trained again from fresh seeds",
        "",
        f"Recommended: **{figures['recommended']}** (the best score against the baseline whose 95% interval "
        "lies above 0.5; the baseline when none does). Score: mean pairwise score against the baseline's "
        "networks, every network of the setting against every baseline network, every seating where both "
        "sit; interval: bootstrap over both sides' training seeds and the games. Panel: strength after "
        "training, mean over seeds with a t-interval.",
        "",
        "| setting | score vs baseline | 95% interval | games | seeds | panel | panel 95% interval |",
        "|---|---|---|---|---|---|---|",
    ]
    settings = sorted(figures["candidates"].items(), key=lambda item: -item[1]["score"])
    for setting, r in [(s, r) for s, r in settings if WITHOUT not in s]:
        lines.append(
            f"| {setting} | {shown(r['score'])} | {shown(r['ci95_low'])}–{shown(r['ci95_high'])} | {r['games']} | "
            f"{r['seeds']} | {shown(r['panel'])} | {shown(r['panel_ci95_low'])}–{shown(r['panel_ci95_high'])} |"
        )
    lines.append(
        f"| baseline | 0.5 | | | {base['seeds']} | {shown(base['panel'])} | "
        f"{shown(base['panel_ci95_low'])}–{shown(base['panel_ci95_high'])} |"
    )
    return lines + ablation_lines(figures["candidates"])


def ablation_lines(results: dict[str, dict]) -> list[str]:
    """Which tuned param carries the effect: the best setting with each param put back to the
    baseline's, against the baseline; the cost is the full setting's score less the ablation's."""
    ablations = {s: r for s, r in results.items() if WITHOUT in s}
    if not ablations:
        return []
    full = next(iter(ablations)).split(WITHOUT)[0]
    lines = [
        "",
        f"### Which param carries the effect: {full} with each tuned param put back to the baseline's",
        "",
        "| param put back | score vs baseline | 95% interval | cost (full setting's score less this) |",
        "|---|---|---|---|",
    ]
    for setting, r in sorted(ablations.items(), key=lambda item: item[1]["score"]):
        cost = results[full]["score"] - r["score"]
        interval = f"{shown(r['ci95_low'])}–{shown(r['ci95_high'])}"
        lines.append(f"| {setting.split(WITHOUT)[1]} | {shown(r['score'])} | {interval} | {cost:+.3f} |")
    return lines


def write_best_params(params_path: Path, values: dict, out: Path) -> None:
    """params.yaml with the values substituted, written as DVC writes it for `dvc exp run -S` (round
    trip, the layout params.yaml has), so that the file differs from params.yaml only in the tuned
    lines (and in passwords, masked)."""
    yaml = YAML()
    yaml.default_flow_style = False
    data = yaml.load(params_path.read_text())
    for path, value in values.items():
        *sections, name = path.split(".")
        node = data
        for section in sections:
            node = node.setdefault(section, {})  # a short params file may leave a section to its defaults
        node[name] = value
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    write_text(out, mask_passwords(buffer.getvalue()))


def save_figure(axes, path: Path) -> None:
    figure = np.ravel(axes)[0].figure
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)


def readable_slices(axes):
    """Optuna's slice plot, legible: on a log axis its minor ticks' labels ran into each other
    ("3×10⁰4×10⁻¹"), and its colour map drew the first trials (the baseline) white on white."""
    for ax in np.ravel(axes):
        if ax.get_xscale() == "log":
            ax.xaxis.set_minor_formatter(NullFormatter())
        for points in ax.collections:
            points.set_edgecolor("0.35")
            points.set_linewidth(0.6)
    return axes


def write_plots(
    study: optuna.Study, out: Path, figure: str = "strength", steps: str = "generation", slices=PAPER_PARAMS
) -> list[tuple[str, str]]:
    """PNG files and captions; a plot that needs more finished trials than there are is left out, with a
    caption and no file that says so.
    `figure` names what a trial scores, `steps` what its intermediate values count, `slices` the params
    sliced first (all tuned ones where none of them was)."""
    multi = len(study.directions) > 1
    target = {"target": (lambda t: t.values[0]), "target_name": figure} if multi else {}
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    tuned = list(study.best_trials[0].params) if complete else []
    made = []
    name = figure.capitalize()

    def add(file: str, caption: str, draw) -> None:
        save_figure(draw(), out / file)
        made.append((file, caption))

    if complete:
        add(
            "history.png",
            f"{name} of each complete trial and the best so far",
            lambda: plots.plot_optimization_history(study, **target),
        )
    if len(complete) >= 2 and tuned:
        add(
            "importances.png",
            f"Share of the {figure}'s variance each parameter explains (fANOVA)",
            lambda: plots.plot_param_importances(study, **target),
        )
        sliced = [p for p in slices if p in tuned] or tuned
        add(
            "slices.png",
            f"{name} against each parameter (darker: later trials)",
            lambda: readable_slices(plots.plot_slice(study, sliced, **target)),
        )
    else:  # said, not silently dropped: the docs promise both plots
        made.append(("", f"Importances and slices are left out: they need 2 complete trials, this study has "
                         f"{len(complete)}"))  # fmt: skip
    if not multi and any(t.intermediate_values for t in study.trials):
        add(
            "intermediate.png",
            f"{name} after each {steps}; pruned trials stop early",
            lambda: plots.plot_intermediate_values(study),
        )
    if multi and complete:
        add(
            "pareto.png",
            f"{name} against wall seconds of self-play and training",
            lambda: plots.plot_pareto_front(study, target_names=[figure, "seconds"]),
        )
    return made


def plot_lines(made: list[tuple[str, str]]) -> list[str]:
    """The report's pictures with their captions; a plot left out as a line that says why."""
    lines = []
    for name, caption in made:
        lines += ["", f"![{caption}]({name})", "", f"*{caption}.*"] if name else ["", f"{caption}."]
    return lines


def compute_lines(trials: list[optuna.trial.FrozenTrial]) -> list[str]:
    """What the study spent, in generations trained: the yardstick of a pruned against a plain study.
    A failed or cut-off trial's generations count, since their compute was spent."""
    label = {optuna.trial.TrialState.FAIL: "failed"}
    spent = {label.get(state, state.name.lower()): 0 for state in optuna.trial.TrialState}
    for trial in trials:
        spent[label.get(trial.state, trial.state.name.lower())] += len(trial.intermediate_values)
    if not any(spent.values()):
        return []
    parts = ", ".join(f"{n} in {state} trials" for state, n in spent.items() if n)
    return ["", f"Compute: {sum(spent.values())} generations trained ({parts})."]


def param_value(value) -> str:
    """A trial's value of one param in a report's table: a number to 4 digits, a choice as it is."""
    return f"{value:.4g}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


def trial_lines(trials: list[optuna.trial.FrozenTrial]) -> list[str]:
    """A row a finished trial, strongest first: its strength and the params it tried, so that a reader
    sees what each figure belongs to without opening trials.csv."""
    finished = sorted((t for t in trials if t.state in FINISHED and t.values), key=lambda t: -t.values[0])
    if not finished:
        return []
    paths = sorted({path for t in finished for path in t.params})
    rows = [
        f"| {t.number}{' (baseline)' if t.user_attrs.get(BASELINE) else ''} | {t.state.name.lower()} | "
        f"{t.values[0]:.3f} | {len(t.intermediate_values)} | "
        + " | ".join(param_value(t.params[path]) if path in t.params else "" for path in paths)
        + " |"
        for t in finished
    ]
    header = "| trial | state | strength | generations | " + " | ".join(f"`{path}`" for path in paths) + " |"
    return ["", "## Trials, strongest first", "", header, "|---" * (4 + len(paths)) + "|", *rows]


def write_report(study: optuna.Study, params: Params, params_path: Path, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    trials = study.get_trials(deepcopy=False)
    finished = [t for t in trials if t.state in FINISHED]
    lines = [f"# Sweep `{study.study_name}` on {params.game}", ""]
    counts = {state.name.lower(): sum(t.state == state for t in trials) for state in optuna.trial.TrialState}
    sweep = params.sweep
    lines += [
        f"Each trial: {sweep.generations} generations, each with the self-play cost of {params.selfplay.games} "
        f"games at {params.search.simulations} simulations a move; strength = mean pairwise score against "
        f"{', '.join(sweep.panel)} with {sweep.eval_simulations} simulations, "
        f"{sweep.games_per_seating} games per seating.",
        "",
        ", ".join(f"{n} {state}" for state, n in counts.items() if n) or "no trials yet",
    ]
    lines += compute_lines(trials)
    if trials:
        with atomic_path(out / "trials.csv") as tmp:
            study.trials_dataframe().to_csv(tmp, index=False)
    confirmed = json.loads((out / CONFIRMED).read_text()) if (out / CONFIRMED).exists() else None
    if confirmed:
        units = confirmed["baseline"]["seeds"] + sum(r["seeds"] for r in confirmed["candidates"].values())
        lines.append(
            f"The confirmation trained {units} networks more, {units * sweep.generations} generations "
            f"({sweep.generations} each)."
        )
    if confirmed:
        lines += confirmation_lines(confirmed)
        recommended = confirmed["recommended"]
        chosen = confirmed["candidates"][recommended]["params"] if recommended in confirmed["candidates"] else None
        values = implied_values(params, chosen if chosen is not None else baseline_values(study))
        heading = (
            f"## Recommended: {recommended}, confirmed by re-training"
            if recommended != BASELINE
            else "## Recommended: the baseline (no setting's interval lay above it when trained again)"
        )
    elif any(t.state == optuna.trial.TrialState.COMPLETE for t in finished):
        best = best_trial(study)
        values = implied_values(params, best.params)
        heading = (
            f"## Best single trial: trial {best.number}, strength {best.values[0]:.3f} (not confirmed: the best "
            "of many noisy trials is biased upward; `sweep --confirm` re-trains it from fresh seeds)"
        )
    if confirmed or any(t.state == optuna.trial.TrialState.COMPLETE for t in finished):
        write_best_params(params_path, values, out / "best_params.yaml")
        settings = " ".join(f"-S {path}={value}" for path, value in values.items())
        lines += [
            "",
            heading,
            "",
            *[f"- `{path}`: {value}" for path, value in values.items()],
            "",
            f"`best_params.yaml` is {params_path.name} with these values. Train with them: `dvc exp run {settings}`,",
            f"or `cp {out / 'best_params.yaml'} params.yaml && dvc repro`.",
        ]
    if (out / VERSUS).exists():
        versus = json.loads((out / VERSUS).read_text())
        lines += [
            "",
            f"## Tuned (trial {versus['tuned_trial']}) against the baseline (trial {versus['baseline_trial']})",
            "",
            f"Pairwise score {shown(versus['score'])}, "
            f"95% CI [{shown(versus['ci95_low'])}, {shown(versus['ci95_high'])}], "
            f"{versus['games']} games over every seating where both sit (0.5 = equal).",
        ]
    lines += trial_lines(trials) + plot_lines(write_plots(study, out))
    path = out / "report.md"
    write_text(path, "\n".join(lines) + "\n")
    return path
