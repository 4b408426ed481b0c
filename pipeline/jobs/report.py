"""The pipeline's report: one self-contained HTML page (plots embedded), a Markdown summary beside its
PNG plots (which `dvc plots show` also shows: images need no script from the internet, vega plots do),
and the few headline numbers `dvc metrics show` prints.

Each section comes from the data it needs and is left out when that experiment did not run, so the
same report serves every game. Every plot's caption says what it measures and at what budget.
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.atomic import atomic_path, write_text  # noqa: E402
from pipeline.jobs.strength_curve import cumulative_compute, curve  # noqa: E402

# AlphaZero.jl's Connect-4 agent (600 simulations) on Pons' sets, from pipeline/positions/connect4/README.md
PUBLISHED_MISTAKES = {
    "Test_L3_R1": 0.0,
    "Test_L2_R1": 0.0,
    "Test_L2_R2": 2.7,
    "Test_L1_R1": 0.0,
    "Test_L1_R2": 2.0,
    "Test_L1_R3": 7.0,
}
# The depth-5 minimax baseline on the same sets, same source.
PUBLISHED_MINIMAX5 = {
    "Test_L3_R1": 1.4,
    "Test_L2_R1": 0.7,
    "Test_L2_R2": 9.2,
    "Test_L1_R1": 1.7,
    "Test_L1_R2": 7.3,
    "Test_L1_R3": 23.5,
}


@dataclass
class Plot:
    name: str  # file stem
    caption: str
    figure: object


@dataclass
class Section:
    title: str
    text: str = ""
    plots: list[Plot] = field(default_factory=list)
    tables: list[list[dict]] = field(default_factory=list)


def _log_levels(ax, levels: list[int]) -> None:
    """Budgets on a log axis, labelled with the budgets themselves."""
    ax.set_xscale("log")
    ax.set_xticks(levels, [str(level) for level in levels])
    ax.minorticks_off()


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def generation_rows(selfplay: list[dict], train: list[dict], gate: list[dict]) -> list[dict]:
    return [
        {
            "generation": g,
            "policy_loss": round(t["policy_loss"], 4),
            "value_loss": round(t["value_loss"], 4),
            "gate_score": round(gt["gate_score"], 4),
            "promoted": int(gt["promoted"]),
            "games_per_s": round(s["games_per_s"], 2),
            "simulations_per_s": round(s["simulations_per_s"], 1),
        }
        for g, (s, t, gt) in enumerate(zip(selfplay, train, gate), start=1)
    ]


def fig3_rows(evaluation: dict) -> list[dict]:
    return [
        {
            "opponent_rollouts": a["opponent_rollouts"],
            "alphazero_score": round(a["score"], 4),
            "opponent_score_vs_alphazero": round(a["opponent_score"], 4),
            "alphazero_difference": round(a["difference"], 4),
            "control_difference": round(c["difference"], 4),
        }
        for a, c in zip(evaluation["fig3a"], evaluation["fig3b_control"])
    ]


# --- sections ------------------------------------------------------------------------------------
def training_section(game: str, selfplay: list[dict], train: list[dict], gate: list[dict]) -> Section:
    gens = generation_rows(selfplay, train, gate)
    x = [r["generation"] for r in gens]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps, policy, value = [], [], []
    for g, t in enumerate(train, start=1):
        for e, epoch in enumerate(t["epochs"]):
            steps.append(g - 1 + (e + 1) / len(t["epochs"]))
            policy.append(epoch["policy_loss"])
            value.append(epoch["value_loss"])
    ax.plot(steps, policy, label="policy cross-entropy")
    ax.plot(steps, value, label="value MSE (mean over seats)")
    ax.set(xlabel="generation (epochs within)", ylabel="training loss", title=f"{game}: loss per epoch")
    ax.legend()
    loss = Plot("loss", "Training loss per epoch on the replay window (seed 000's loss convergence).", fig)

    threshold = gate[0]["threshold"] if gate else 0.5
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if all("gate_win" in g for g in gate):  # seed 002's win / draw / loss rates against the best so far
        bottom = [0.0] * len(gate)
        for kind, color in (("win", "tab:green"), ("draw", "tab:gray"), ("loss", "tab:red")):
            shares = [g[f"gate_{kind}"] for g in gate]
            ax.bar(x, shares, bottom=bottom, color=color, alpha=0.6, label=kind)
            bottom = [b + v for b, v in zip(bottom, shares)]
    ax.plot(x, [r["gate_score"] for r in gens], "ko-", label="score (draws half)")
    for r in gens:
        if r["promoted"]:
            ax.annotate("promoted", (r["generation"], r["gate_score"]), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=7)  # fmt: skip
    ax.axhline(threshold, color="tab:red", linestyle="--", label=f"threshold {threshold}")
    ax.set(xlabel="generation", ylabel="share of seat pairs", ylim=(0, 1.1), title="candidate vs best so far")
    ax.set_xticks(x)
    ax.legend(fontsize=7, loc="lower left")
    games = gate[0].get("gate_games", "?") if gate else "?"
    gate_plot = Plot(
        "gate",
        f"Candidate against the best so far, {games} games a generation over every mixed seating: win, draw and "
        "loss shares of seat pairs. Seed 002 expects about 50% without a long falling trend.",
        fig,
    )
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 4.5), sharex=True)
    top.plot(x, [r["games_per_s"] for r in gens], "o-")
    top.set(ylabel="games / s", title="self-play speed per generation")
    bottom.plot(x, [r["simulations_per_s"] for r in gens], "o-", color="tab:orange")
    bottom.set(xlabel="generation", ylabel="simulations / s")
    speed = Plot("speed", "Self-play throughput of each generation (all workers together).", fig)
    return Section("Training", f"{len(gens)} generations.", [loss, gate_plot, speed], [gens])


def fig3_section(evaluation: dict) -> Section:
    rows = fig3_rows(evaluation)
    levels, rollouts = [r["opponent_rollouts"] for r in rows], evaluation["rollouts"]
    games = evaluation["fig3a"][0]["games"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(levels, [r["alphazero_score"] for r in rows], "o-", label=f"AlphaZero ({rollouts} rollouts)")
    ax.plot(levels, [r["opponent_score_vs_alphazero"] for r in rows], "s-", label="UCT opponents")
    _log_levels(ax, levels)
    ax.set(xlabel="opponent UCT rollouts", ylabel="mean score per game", title="fig. 3a: AlphaZero vs UCT")
    ax.legend()
    a = Plot("fig3a", f"Mean score per game, {games} games per level over every seat permutation.", fig)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(levels, [r["alphazero_difference"] for r in rows], "o-", label=f"AlphaZero ({rollouts} rollouts)")
    ax.plot(levels, [r["control_difference"] for r in rows], "s-", label=f"control UCT ({rollouts} rollouts)")
    ax.axhline(0, color="black", linewidth=0.8)
    _log_levels(ax, levels)
    ax.set(xlabel="opponent UCT rollouts", ylabel="own score - opponents' score", title="fig. 3b: score difference")
    ax.legend()
    b = Plot("fig3b", "Own mean score minus the opponents', for the champion and for a control UCT.", fig)
    return Section("Seed 000 experiments", fig3_verdict(rows, rollouts), [a, b], [rows])


def fig3_verdict(rows: list[dict], rollouts: int) -> str:
    """Level by level what the table shows: a single verdict over all levels hid where the champion led."""
    words = []
    for r in rows:
        mine, control = r["alphazero_difference"], r["control_difference"]
        side = "ahead" if mine > control else "behind" if mine < control else "level"
        words.append(f"{side} at {r['opponent_rollouts']} ({mine:+.3f} vs {control:+.3f})")
    ahead = sum(r["alphazero_difference"] > r["control_difference"] for r in rows)
    return (
        f"Score difference against each UCT opponent level, the champion against the control UCT, both at {rollouts} "
        f"rollouts: {'; '.join(words)}. The champion is ahead at {ahead} of {len(rows)} levels (seed 000, fig. 3)."
    )


def oracle_section(evaluation: dict) -> Section:
    """Two-player Pig: the champion's win rate against exact and classic strategies."""
    rows = [
        {
            "opponent": r["opponent"],
            "champion_win_rate": round(r["score"], 4),
            "ci95": f"{r['ci95_low']:.3f} to {r['ci95_high']:.3f}",
            "games": r["games"],
        }
        for r in evaluation["pig_oracle"]
    ]
    exact = [
        {
            "opponent": r["opponent"],
            "policy_head_win_rate": round(r["score"], 4),
            "moving_first": round(r["moving_first"], 4),
            "moving_second": round(r["moving_second"], 4),
        }
        for r in evaluation.get("pig_oracle_policy_exact", [])
    ]
    text = (
        f"The champion at {evaluation['rollouts']} rollouts, without noise, against the optimal policy (value "
        "iteration; optimal against optimal wins 50%) and a fixed hold threshold, half the games in each seat. "
        "Second table: the champion's policy head alone (no search), its win probability computed exactly."
    )
    return Section("Oracle: two-player Pig", text, tables=[rows, exact] if exact else [rows])


def ratings_section(evaluation: dict) -> Section:
    """Bradley-Terry ratings per generation with intervals, baselines as lines; seed 002's W/D/L curves."""
    table = evaluation["ratings"]
    by_name = {row["name"]: row for row in table}
    player_of = {int(g): name for g, name in evaluation["player_of_generation"].items()}
    gens = sorted(player_of)
    rating = [by_name[player_of[g]]["rating"] for g in gens]
    low = [by_name[player_of[g]]["rating"] - by_name[player_of[g]]["ci_low"] for g in gens]
    high = [by_name[player_of[g]]["ci_high"] - by_name[player_of[g]]["rating"] for g in gens]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.errorbar(gens, rating, yerr=[low, high], fmt="o-", capsize=3, label="best network of the generation")
    for name, row in by_name.items():
        if not name.startswith("gen"):
            ax.axhline(row["rating"], linestyle=":", color="tab:gray")
            ax.annotate(name, (gens[0], row["rating"]), textcoords="offset points", xytext=(2, 3), fontsize=7)
    ax.set(xlabel="generation", ylabel="Elo (generation 0 = 0)", title="rating over generations")
    ax.set_xticks(gens)
    ax.legend(fontsize=7)
    games = sum(row["games"] for row in table) // 2
    plots = [
        Plot(
            "ratings",
            f"Bradley-Terry ratings on the Elo scale with 95% intervals, fitted from {games} pairwise results "
            "between the generations' best networks and UCT baselines (dotted).",
            fig,
        )
    ]
    rows = evaluation["versus_first"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    x = [r["generation"] for r in rows]
    for kind, color in (("win", "tab:green"), ("draw", "tab:gray"), ("loss", "tab:red")):
        ax.plot(x, [r[kind] for r in rows], "o-", color=color, label=kind)
    ax.set(xlabel="generation", ylabel="share of seat pairs", ylim=(0, 1), title="against the first network")
    ax.set_xticks(x)
    ax.legend(fontsize=7)
    plots.append(Plot("versus_first", "Seed 002: win / draw / loss rate of each generation's best network "
                      "against the untrained first network.", fig))  # fmt: skip
    rounded = [
        {k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}
        for row in sorted(table, key=lambda r: -r["rating"])
    ]
    return Section("Ratings", "", plots, [rounded])


def alphabeta_section(evaluation: dict) -> Section:
    """Seed 004's appendix table as a heat map: champion budget x alpha-beta depth."""
    data = evaluation["alphabeta"]
    sims, depths = data["simulations"], data["depths"]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=True)
    for ax, side in zip(axes, ("first", "second", "both")):
        grid = [[data[side][i][j] for j in range(len(depths))] for i in range(len(sims))]
        image = ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
        for i in range(len(sims)):
            for j in range(len(depths)):
                ax.text(j, i, f"{grid[i][j]:.2f}", ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(depths)), depths)
        ax.set_yticks(range(len(sims)), sims)
        ax.set(xlabel="alpha-beta depth", title=f"champion moving {side}" if side != "both" else "both sides")
    axes[0].set_ylabel("champion simulations")
    fig.colorbar(image, ax=axes, shrink=0.8, label="champion score (draw half)")
    caption = (
        f"Champion against depth-limited alpha-beta (open-threes heuristic), {data['games_per_side']} games with "
        "each side first per cell, as in seed 004's appendix."
    )
    return Section("Alpha-beta table (seed 004)", "", [Plot("alphabeta", caption, fig)])


def solver_section(evaluation: dict) -> Section:
    rows = [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in evaluation["solver_games"]]
    text = (
        "Games against the perfect solver (seed 004 fig. 5): the first player can force a win, so the champion "
        "loses as second player at best; `moves_to_loss` counts the champion's moves in the games it lost."
    )
    return Section("Against the perfect solver", text, tables=[rows])


def benchmark_section(evaluation: dict) -> Section:
    rows = evaluation["benchmark"]
    files = list(dict.fromkeys(r["set"] for r in rows))
    choosers = list(dict.fromkeys(r["chooser"] for r in rows))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    width = 0.8 / (len(choosers) + 1)
    for k, chooser in enumerate(choosers):
        values = {r["set"]: r["percent"] for r in rows if r["chooser"] == chooser}
        ax.bar([i + k * width for i in range(len(files))], [values.get(f, 0) for f in files], width, label=chooser)
    published = [PUBLISHED_MISTAKES.get(f) for f in files]
    ax.bar([i + len(choosers) * width for i in range(len(files))], [p or 0 for p in published], width,
           color="black", alpha=0.3, label="AlphaZero.jl, 600 sims (published)")  # fmt: skip
    ax.set_xticks([i + width * len(choosers) / 2 for i in range(len(files))], files, rotation=20, fontsize=7)
    ax.set(ylabel="mistakes (%)", title="Connect-4 test positions")
    ax.legend(fontsize=7)
    positions = rows[0]["positions"]
    caption = (
        f"Share of moves whose win/draw/loss outcome is worse than the best available, {positions} positions per "
        "set, for the raw policy and for search; grey: the published AlphaZero.jl figures."
    )
    table = [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in rows]
    return Section("Connect-4 benchmark", "", [Plot("benchmark", caption, fig)], [table])


def curve_section(rows: list[dict]) -> Section:
    """Mistakes per generation against the self-play simulations and wall hours spent (`curve` rows),
    averaged over the sets, beside the published AlphaZero.jl and depth-5 minimax averages."""
    sets = list(dict.fromkeys(r["set"] for r in rows))
    choosers = list(dict.fromkeys(r["chooser"] for r in rows))
    generations = sorted({r["generation"] for r in rows})
    mean = {
        (g, c): sum(r["percent"] for r in rows if r["generation"] == g and r["chooser"] == c) / len(sets)
        for g in generations
        for c in choosers
    }
    spent = {r["generation"]: r for r in rows}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, key, label in zip(axes, ("simulations", "hours"), ("self-play simulations", "wall hours")):
        for chooser in choosers:
            ax.plot([spent[g][key] for g in generations], [mean[g, chooser] for g in generations], "o-", label=chooser)
        for published, style, name in ((PUBLISHED_MISTAKES, "--", "AlphaZero.jl, 600 sims"),
                                       (PUBLISHED_MINIMAX5, ":", "minimax depth 5")):  # fmt: skip
            if all(s in published for s in sets):
                ax.axhline(sum(published[s] for s in sets) / len(sets), color="k", linestyle=style, label=name)
        ax.set(xlabel=label)
    axes[0].set(ylabel="mistakes (%), mean over sets", title="Connect-4 mistakes against compute")
    axes[0].legend(fontsize=7)
    caption = (
        f"Mean share of mistakes over {len(sets)} of Pons' sets ({rows[0]['positions']} positions each) for the best "
        "network of each generation, against the self-play simulations and the wall hours (self-play, training, "
        "gating) spent to reach it; dashed and dotted: the published AlphaZero.jl and depth-5 minimax averages."
    )
    table = [
        {
            "generation": g,
            "simulations": spent[g]["simulations"],
            "hours": round(spent[g]["hours"], 2),
            **{f"{r['set'].removeprefix('Test_')} {r['chooser']}": round(r["percent"], 1)
               for r in rows if r["generation"] == g},
        }
        for g in generations
    ]  # fmt: skip
    return Section("Connect-4 mistakes against compute", "", [Plot("benchmark_curve", caption, fig)], [table])


def _sections(game: str, selfplay, train, gate, evaluation: dict) -> list[Section]:
    sections = [training_section(game, selfplay, train, gate)]
    builders = {
        "ratings": ratings_section,
        "fig3a": fig3_section,
        "pig_oracle": oracle_section,
        "alphabeta": alphabeta_section,
        "solver_games": solver_section,
        "benchmark": benchmark_section,
    }
    sections += [build(evaluation) for key, build in builders.items() if evaluation.get(key)]
    if evaluation.get("benchmark_generations"):
        compute = cumulative_compute(selfplay, train, gate, evaluation["rollouts"])
        sections.append(curve_section(curve(evaluation["benchmark_generations"], compute)))
    if evaluation.get("skipped"):
        sections.append(Section("Experiments not run", " ".join(evaluation["skipped"])))
    return sections


# --- headline numbers ----------------------------------------------------------------------------
def champion_generation(promoted: list[bool]) -> int:
    """The generation whose network the final best file holds, given each gate's decision in order: the
    last promoted candidate, or 0 (the first network). Later best files are copies of it."""
    return max((g for g, up in enumerate(promoted, start=1) if up), default=0)


def summary_metrics(train: list[dict], gate: list[dict], evaluation: dict) -> dict[str, float]:
    """A few numbers for `dvc metrics show` and `dvc exp show`, one narrow row; the tables are in the
    report. The last generation's losses and gate score, which generation the champion is, and the
    experiments' headlines where they ran."""
    metrics = {
        "champion_gen": champion_generation([bool(g["promoted"]) for g in gate]),
        "policy_loss": round(train[-1]["policy_loss"], 4),
        "value_loss": round(train[-1]["value_loss"], 4),
        "gate_score": round(gate[-1]["gate_score"], 4),
    }
    if evaluation.get("ratings"):
        ratings = {row["name"]: row["rating"] for row in evaluation["ratings"]}
        player_of = {int(g): player for g, player in evaluation["player_of_generation"].items()}
        metrics["elo"] = round(ratings[player_of[max(player_of)]], 1)
    if evaluation.get("fig3a"):
        rows = fig3_rows(evaluation)
        metrics["fig3_ahead"] = sum(r["alphazero_difference"] > r["control_difference"] for r in rows)
    for row in evaluation.get("pig_oracle", []):
        if row["opponent"] == "optimal":
            metrics["win_vs_optimal"] = round(row["score"], 4)
    return metrics


# --- output --------------------------------------------------------------------------------------
def _markdown_table(rows: list[dict]) -> str:
    header = "| " + " | ".join(rows[0]) + " |"
    rule = "| " + " | ".join("---" for _ in rows[0]) + " |"
    body = ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    return "\n".join([header, rule, *body])


def _html_table(rows: list[dict]) -> str:
    head = "".join(f"<th>{html.escape(str(k))}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "figure{margin:1.5em 0}figcaption{color:#555;font-size:.9em}img{max-width:100%}"
)


def write_report(
    out: Path, game: str, selfplay: list[dict], train: list[dict], gate: list[dict], evaluation: dict
) -> list[Path]:
    """Write report.html, report.md and a PNG per plot under `out`; return the paths."""
    sections = _sections(game, selfplay, train, gate, evaluation)
    written: list[Path] = []
    markdown = [f"# AlphaZero report: {game}", "", "The full report with every plot is `report.html`.", ""]
    page = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(game)}</title><style>{_STYLE}</style>"]
    page.append(f"<h1>AlphaZero report: {html.escape(game)}</h1>")
    for section in sections:
        markdown += [f"## {section.title}", section.text, ""]
        page += [f"<h2>{html.escape(section.title)}</h2>", f"<p>{html.escape(section.text)}</p>"]
        for table in section.tables:
            markdown += [_markdown_table(table), ""]
            page.append(_html_table(table))
        for plot in section.plots:
            png = _png(plot.figure)
            path = out / f"{plot.name}.png"
            with atomic_path(path) as tmp:
                tmp.write_bytes(png)
            written.append(path)
            markdown += [f"![{plot.name}]({plot.name}.png)", "", f"*{plot.caption}*", ""]
            encoded = base64.b64encode(png).decode()
            page.append(
                f"<figure><img alt='{plot.name}' src='data:image/png;base64,{encoded}'>"
                f"<figcaption>{html.escape(plot.caption)}</figcaption></figure>"
            )
    write_text(out / "report.md", "\n".join(markdown))
    write_text(out / "report.html", "\n".join(page) + "\n")
    return [out / "report.html", out / "report.md", *written]
