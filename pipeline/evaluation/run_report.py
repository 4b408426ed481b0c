"""The pipeline's report: one self-contained HTML page (plots embedded), a Markdown summary beside its
PNG plots (which `dvc plots show` also shows: images need no script from the internet, vega plots do),
and the few headline numbers `dvc metrics show` prints.

The training section is drawn here; every experiment draws its own (`pipeline/experiments/`),
left out when it did not run, so the same report serves every game. Every plot's caption says what it
measures and at what budget.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from pydantic import BaseModel

from pipeline.config import NOT_SETTING, Params, dotted
from pipeline.experiments import Evaluation, ReportContext
from pipeline.experiments.sections import Plot, Section, plt
from pipeline.plumbing.atomic import atomic_path, write_text


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


# --- params --------------------------------------------------------------------------------------
def params_section(params: Params, key: str) -> Section:
    """The params that produced this run, one row per section (all but where it ran and logged), so a
    report read beside another says what differs; `key` finds the run in MLflow."""
    rows = []
    for name in Params.model_fields:
        if name in NOT_SETTING:
            continue
        value = getattr(params, name)
        if name == "generations":
            text = str(params.final_generation)
        elif isinstance(value, BaseModel):
            text = ", ".join(f"{k} {v}" for k, v in dotted(value.model_dump()).items())
        else:
            text = str(value)
        rows.append({"params": name, "values": text})
    text = f"The MLflow parent run of this setting carries the tag `setting = {key}`."
    return Section("Params", text, tables=[rows])


# --- training ------------------------------------------------------------------------------------
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
    loss = Plot("loss", "Training loss per epoch on the replay window (Petosa & Balch's loss convergence).", fig)

    threshold = gate[0]["threshold"] if gate else 0.5
    fig, ax = plt.subplots(figsize=(6, 3.5))
    if all("gate_win" in g for g in gate):  # the Connect-4 bot post's win / draw / loss rates against the best so far
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
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the bars, not over the first ones
    games = gate[0].get("gate_games", "?") if gate else "?"
    gate_plot = Plot(
        "gate",
        f"Candidate against the best so far, {games} games a generation over every mixed seating: win, draw and "
        "loss shares of seat pairs. The Connect-4 bot post expects about 50% without a long falling trend.",
        fig,
    )
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 4.5), sharex=True)
    top.plot(x, [r["games_per_s"] for r in gens], "o-")
    top.set(ylabel="games / s", title="self-play speed per generation")
    bottom.plot(x, [r["simulations_per_s"] for r in gens], "o-", color="tab:orange")
    bottom.set(xlabel="generation", ylabel="simulations / s")
    speed = Plot("speed", "Self-play throughput of each generation (all workers together).", fig)
    return Section("Training", f"{len(gens)} generations.", [loss, gate_plot, speed], [gens])


# --- headline numbers ----------------------------------------------------------------------------
def champion_generation(promoted: list[bool]) -> int:
    """The generation whose network the final best file holds, given each gate's decision in order: the
    last promoted candidate, or 0 (the first network). Later best files are copies of it."""
    return max((g for g, up in enumerate(promoted, start=1) if up), default=0)


def summary_metrics(train: list[dict], gate: list[dict], evaluation: Evaluation) -> dict[str, float]:
    """A few numbers for `dvc metrics show` and `dvc exp show`, one narrow row; the tables are in the
    report. The last generation's losses and gate score, which generation the champion is, and the
    experiments' headlines where they ran."""
    metrics = {
        "champion_gen": champion_generation([bool(g["promoted"]) for g in gate]),
        "policy_loss": round(train[-1]["policy_loss"], 4),
        "value_loss": round(train[-1]["value_loss"], 4),
        "gate_score": round(gate[-1]["gate_score"], 4),
    }
    return {**metrics, **evaluation.headline()}


# --- output --------------------------------------------------------------------------------------
def _markdown_table(rows: list[dict]) -> str:
    header = "| " + " | ".join(rows[0]) + " |"
    rule = "| " + " | ".join("---" for _ in rows[0]) + " |"
    body = ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    return "\n".join([header, rule, *body])


def _html_table(rows: list[dict]) -> str:
    """A table that stays on the page: headers such as `opponent_simulations` may break after an
    underscore, and a table still wider than the page scrolls in its own box (fig. 3's ran off a 1280 px
    window)."""
    head = "".join(f"<th>{html.escape(str(k)).replace('_', '_<wbr>')}</th>" for k in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r.values()) + "</tr>" for r in rows)
    return f"<div class='wide'><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"


_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}"
    ".wide{overflow-x:auto}table{border-collapse:collapse;margin:1em 0;font-size:.9em}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "figure{margin:1.5em 0}figcaption{color:#555;font-size:.9em}img{max-width:100%}"
)


def write_report(
    out: Path,
    game: str,
    selfplay: list[dict],
    train: list[dict],
    gate: list[dict],
    evaluation: Evaluation,
    start: dict | None = None,
    preface: tuple[Section, ...] = (),
) -> list[Path]:
    """Write report.html, report.md and a PNG per plot under `out`; return the paths: the `preface`
    (the run's params), the training section, then each experiment's (`pipeline/experiments/`).
    `start`: the compute behind generation 0."""
    context = ReportContext(game, selfplay, train, gate, start)
    sections = [*preface, training_section(game, selfplay, train, gate), *evaluation.sections(context)]
    return write_pages(out, "report", f"AlphaZero report: {game}", sections)


def write_pages(out: Path, stem: str, title: str, sections: list[Section]) -> list[Path]:
    """`<stem>.html` (one self-contained page, plots embedded) and `<stem>.md` beside a PNG per plot,
    under `out`; return the paths, the HTML page first."""
    written: list[Path] = []
    markdown = [f"# {title}", "", f"The full page with every plot is `{stem}.html`.", ""]
    page = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title><style>{_STYLE}</style>"]
    page.append(f"<h1>{html.escape(title)}</h1>")
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
    write_text(out / f"{stem}.md", "\n".join(markdown))
    write_text(out / f"{stem}.html", "\n".join(page) + "\n")
    return [out / f"{stem}.html", out / f"{stem}.md", *written]
