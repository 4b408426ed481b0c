"""A play-time study's report: the recommended `search:` block, ready to paste into a champion's
params; the confirmation on fresh seeds; every trial with its interval; and the plots (optimisation
history, score after each rung of games, importances, slices)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import yaml

from pipeline.config import PLAY_SHIPPED, Params
from pipeline.plumbing.atomic import atomic_path, write_text
from pipeline.sweeps.play import CONFIRMED, figure, trial_scores
from pipeline.sweeps.study import BASELINE, FINISHED
from pipeline.sweeps.training_report import param_value, plot_lines, shown, write_plots


def search_block(params: Params, values: dict) -> str:
    """The params' whole `search:` section with `values` (dotted `search.*` paths) in place; where the
    study searched another budget than the section's own, its `simulations` line says so."""
    section = params.search.model_dump()
    section.update({path.split(".", 1)[1]: value for path, value in values.items()})
    block = yaml.safe_dump({"search": section}, sort_keys=False)
    studied = params.sweep.play.simulations
    if "search.simulations" not in values and studied != section["simulations"]:
        own = f"  simulations: {section['simulations']}\n"
        note = f"  # the network's own; this study searched {budget_line(params)}"
        block = block.replace(own, own.rstrip("\n") + note + "\n", 1)
    return block


def budget_line(params: Params) -> str:
    play = params.sweep.play
    budget = (
        f"{play.move_time:g} s a move (the networks at most {play.simulations} simulations)"
        if play.move_time > 0
        else f"{play.simulations} simulations a move"
    )
    return budget + (f", each round from 0..{play.opening_plies} random moves" if play.opening_plies else "")


def confirmation_lines(figures: dict) -> list[str]:
    against = figures["opponents"]
    lines = [
        "",
        "## Confirmation on fresh seeds",
        "",
        f"Recommended: **{figures['recommended']}** (the best setting whose difference from the shipped one, "
        "paired game by game, has a 95% lower bound above 0; the shipped setting when none has). Score: mean "
        "pairwise score over the opponents, alone against each in every other seat, every seat order.",
        "",
        "| setting | score | 95% interval | "
        + " | ".join(f"vs {o}" for o in against)
        + " | difference | 95% interval |",
        "|---" * (5 + len(against)) + "|",
    ]
    rows = sorted(figures["settings"].items(), key=lambda item: -item[1]["score"])
    for setting, r in rows:
        each = " | ".join(
            f"{shown(r['opponents'][o]['score'])} ({r['opponents'][o]['games']})" if o in r["opponents"] else "0.5"
            for o in against
        )
        difference = (
            f"{r['difference']:+.3f} | {r['difference_ci95_low']:+.3f}–{r['difference_ci95_high']:+.3f}"
            if "difference" in r
            else "0 | "
        )
        lines.append(
            f"| {setting} | {shown(r['score'])} | {shown(r['ci95_low'])}–{shown(r['ci95_high'])} | {each} | "
            f"{difference} |"
        )
    return lines


def trial_lines(trials: list[optuna.trial.FrozenTrial]) -> list[str]:
    finished = sorted((t for t in trials if t.state in FINISHED and t.values), key=lambda t: -t.values[0])
    if not finished:
        return []
    paths = sorted({path for t in finished for path in t.params})
    rows = []
    for t in finished:
        scores = trial_scores(t)
        now = figure(scores)
        games = len(next(iter(scores.values())))
        name = f"{t.number}{' (shipped)' if t.user_attrs.get(BASELINE) else ''}"
        rows.append(
            f"| {name} | {t.state.name.lower()} | {games} | {shown(now['score'])} | {shown(now['ci95_low'])}–"
            f"{shown(now['ci95_high'])} | "
            + " | ".join(param_value(t.params[p]) if p in t.params else "" for p in paths)
            + " |"
        )
    header = "| trial | state | games a member | score | 95% interval | " + " | ".join(f"`{p}`" for p in paths) + " |"
    return ["", "## Trials, strongest first", "", header, "|---" * (5 + len(paths)) + "|", *rows]


def write_report(study: optuna.Study, params: Params, network: str, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    play = params.sweep.play
    trials = study.get_trials(deepcopy=False)
    counts = {state.name.lower(): sum(t.state == state for t in trials) for state in optuna.trial.TrialState}
    played = sum(len(s) for t in trials for s in trial_scores(t).values())
    lines = [
        f"# Play-time sweep `{study.study_name}`: how {network} searches ({params.game})",
        "",
        f"Each trial: the network searching with one setting at {budget_line(params)}, alone against each of "
        f"{', '.join(play.panel)} ({PLAY_SHIPPED}: the same network searching as it plays, a shipped champion "
        "as its card says) in every other seat, "
        f"every seat order, on the same games as every other trial; {', '.join(map(str, play.rungs()))} games "
        f"against each under successive halving (factor {play.reduction_factor}).",
        "",
        (", ".join(f"{n} {state}" for state, n in counts.items() if n) or "no trials yet")
        + f"; {played} games played.",
    ]
    if trials:
        with atomic_path(out / "trials.csv") as tmp:
            study.trials_dataframe().to_csv(tmp, index=False)
    confirmed = json.loads((out / CONFIRMED).read_text()) if (out / CONFIRMED).exists() else None
    complete = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    if confirmed:
        recommended = confirmed["recommended"]
        values = confirmed["settings"][recommended]["values"]
        heading = f"## Recommended: {recommended}, confirmed on fresh seeds"
        if recommended == PLAY_SHIPPED:
            heading = "## Recommended: the shipped setting (no setting's difference cleared it on fresh seeds)"
    elif complete:
        best = study.best_trial
        values = dict(best.params)
        heading = (
            f"## Best single trial: trial {best.number}, score {best.values[0]:.3f} (not confirmed: the best of "
            "many noisy trials is biased upward; `sweep --play NETWORK --confirm` plays it again on fresh seeds)"
        )
    if confirmed or complete:
        lines += ["", heading, "", "Paste into the network's params:", "", "```yaml", search_block(params, values)
                  + "```"]  # fmt: skip
    if confirmed:
        lines += confirmation_lines(confirmed)
    lines += trial_lines(trials) + plot_lines(write_plots(study, out, "score", "rung of games", ()))
    path = out / "report.md"
    write_text(path, "\n".join(lines) + "\n")
    return path
