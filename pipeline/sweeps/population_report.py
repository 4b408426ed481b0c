"""A population's report: the champion (the best member's final network and a params file with its final
settings, which `play`, `match`, `analyse`, `warm_start` and `dvc repro` take), the ranking, the schedule
(every member's settings over generations, each copy marked) drawn and as CSV, the strength curves, and
the compute spent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from pipeline.config import Params  # noqa: E402
from pipeline.plumbing.atomic import atomic_path, write_text  # noqa: E402
from pipeline.sweeps.population import NETWORK, member_reports, schedule  # noqa: E402
from pipeline.sweeps.space import is_integer  # noqa: E402
from pipeline.sweeps.training_report import (  # noqa: E402
    implied_values,
    param_value,
    save_figure,
    shown,
    write_best_params,
)

CHAMPION = "champion"  # the best member after the last generation: champion.ckpt, champion_params.yaml
LEADER = "leader"  # the best member so far, while the population runs: leader.ckpt, leader_params.yaml
SCHEDULE = "schedule.csv"


def member_of(result) -> int | None:
    rows = member_reports([Path(result.path) / "result.json"])
    return int(rows[-1]["member"]) if rows else None


def ranking(rows: pd.DataFrame) -> pd.DataFrame:
    """Each member's last report, the best first: at the last generation, by fitness."""
    last = rows.groupby("member", sort=False).tail(1)
    return last.sort_values(["generation", "fitness"], ascending=False)


def draw_schedule(rows: pd.DataFrame, space: list[str], path: Path) -> None:
    """One panel per setting: each member's value over generations; a copy is a marker where the member
    took another's network, labelled with the source's number."""
    figure, axes = plt.subplots(len(space), 1, figsize=(8, 2.4 * len(space)), sharex=True, squeeze=False)
    for ax, setting in zip(axes[:, 0], space):
        for member, own in rows.groupby("member"):
            line = ax.plot(own["generation"], own[setting], marker=".", label=f"member {member}")[0]
            copies = own[own["copied_from"] >= 0]
            ax.scatter(copies["generation"], copies[setting], marker="*", s=120, color=line.get_color(), zorder=3)
            for _, row in copies.iterrows():
                ax.annotate(f"<{int(row['copied_from'])}", (row["generation"], row[setting]), fontsize=7)
        ax.set_ylabel(setting.split(".")[-1])
    axes[-1, 0].set_xlabel("generation (a star: the member copied the member numbered beside it)")
    axes[0, 0].legend(fontsize=7, ncol=4)
    axes[0, 0].set_title("Schedule: each member's settings over generations")
    save_figure(axes, path)


def draw_strength(rows: pd.DataFrame, path: Path) -> None:
    """Fitness and each panel score over generations, a line per member."""
    panels = ["fitness"] + [c for c in rows.columns if c.startswith("vs_")]
    figure, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.2), squeeze=False, sharey=True)
    for ax, column in zip(axes[0], panels):
        for member, own in rows.groupby("member"):
            ax.plot(own["generation"], own[column], marker=".", label=f"member {member}")
        ax.axhline(0.5, color="grey", lw=0.5)
        ax.set_title(column)
        ax.set_xlabel("generation")
    axes[0, 0].set_ylabel("pairwise score")
    axes[0, 0].legend(fontsize=7)
    save_figure(axes, path)


def write_best(results, best_member: int, params_path: Path, params: Params, values: dict, files: tuple) -> None:
    """The best member's latest network and params.yaml with its latest settings, as `files`."""
    network, settings = files
    result = next(r for r in results if member_of(r) == best_member)
    with result.checkpoint.as_directory() as folder, atomic_path(network) as tmp:
        shutil.copyfile(Path(folder) / NETWORK, tmp)
    write_best_params(params_path, implied_values(params, values), settings)


def write_report(results, params: Params, params_path: Path, folder: Path, out: Path) -> tuple[Path, dict]:
    """The report in `out`; its headline figures for MLflow."""
    out.mkdir(parents=True, exist_ok=True)
    population = params.sweep.population
    space = list(population.space)
    rows = schedule(results, folder)
    lines = [
        f"# Population `{params.population_study()}` on {params.game}",
        "",
        f"{population.members} members, {population.generations} generations each; every {population.interval} "
        f"generations each plays {', '.join(population.panel)} ({population.eval_simulations} simulations a move, "
        f"{population.games_per_seating} games a seating; fitness: the {population.fitness} pairwise score), and "
        f"the bottom {population.quantile:.0%} copy a top member and perturb its settings. Folder: `{folder}`.",
    ]
    if rows.empty:
        write_text(out / "report.md", "\n".join(lines + ["", "No member has reported yet."]) + "\n")
        return out / "report.md", {}
    with atomic_path(out / SCHEDULE) as tmp:
        rows.drop(columns=[c for c in rows.columns if c.startswith("config/")]).to_csv(tmp, index=False)
    simulations = int(rows["interval_simulations"].sum())
    core_hours = float((rows["interval_seconds"] + rows["eval_seconds"]).sum()) / 3600
    copies = int((rows["copied_from"] >= 0).sum())
    lines += [
        "",
        f"Compute: {simulations:,} self-play simulations, {core_hours:.2f} core-hours (self-play, training and "
        f"panel games, one core a member); {copies} cop{'y' if copies == 1 else 'ies'} of a member by another.",
    ]
    ranked = ranking(rows)
    best = ranked.iloc[0]
    finished = int(best["generation"]) == population.generations
    values = {path: plain(best[path], is_integer(params, path)) for path in space}
    panel = [c for c in rows.columns if c.startswith("vs_")]
    lines += [
        "",
        "## Ranking (each member's last report)",
        "",
        "| member | generation | fitness | " + " | ".join(panel) + " | copies | " + " | ".join(space) + " |",
        "|---" * (4 + len(panel) + len(space)) + "|",
    ]
    for _, r in ranked.iterrows():
        cells = [str(int(r["member"])), str(int(r["generation"])), shown(r["fitness"])]
        cells += [shown(r[c]) for c in panel] + [copies_text(r["lineage"])] + [f"{r[p]:.4g}" for p in space]
        lines.append("| " + " | ".join(cells) + " |")
    headline = {"best_fitness": float(best["fitness"]), "simulations": simulations, "core_hours": core_hours}
    name = CHAMPION if finished else LEADER
    files = (out / f"{name}.ckpt", out / f"{name}_params.yaml")
    write_best(results, int(best["member"]), params_path, params, values, files)
    network, settings = files
    heading = "Champion" if finished else "Leader so far (the population has not finished: run the command again)"
    lines += [
        "",
        f"## {heading}: member {int(best['member'])}, fitness {shown(best['fitness'])}",
        "",
        f"`{network.name}` is its network after generation {int(best['generation'])} of {population.generations}; "
        f"`{settings.name}` is {params_path.name} with its latest settings:",
        "",
        *[f"- `{path}`: {param_value(value)}" for path, value in implied_values(params, values).items()],
        "",
        "Play it, measure it, train on from it:",
        "",
        f"    python -m pipeline play {network} --params {settings}",
        f"    python -m pipeline match {network} uct:200 --params {settings}",
        f"    cp {settings} params.yaml && dvc exp run -S warm_start={network}",
        "",
        "The fitness of the best of several noisy members is biased upward: measure it on fresh seeds (`match`) "
        "before shipping it.",
    ]
    draw_schedule(rows, space, out / "schedule.png")
    draw_strength(rows, out / "strength.png")
    lines += ["", "![schedule](schedule.png)", "", "![strength](strength.png)"]
    write_text(out / "report.md", "\n".join(lines) + "\n")
    return out / "report.md", headline


def copies_text(lineage: str) -> str:
    """A member's lineage as the table shows it: `gen 4 from 2, gen 8 from 0`."""
    return ", ".join(f"gen {g} from {m}" for g, m in json.loads(lineage)) or "none"


def plain(value, integer: bool):
    """A setting as params.yaml holds it: numpy's numbers as Python's, integers as integers."""
    value = value.item() if hasattr(value, "item") else value
    return round(value) if integer else value
