"""The pipeline's report: loss curves, gate results per generation and seed 000's fig. 3a/3b, as PNG
plots, CSV tables for `dvc plots`, and a Markdown page that ties them together."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pipeline.atomic import atomic_path, write_text  # noqa: E402


def _log_levels(ax, levels: list[int]) -> None:
    """Opponent levels on a log axis, labelled with the levels themselves."""
    ax.set_xscale("log")
    ax.set_xticks(levels, [str(level) for level in levels])
    ax.minorticks_off()


def _save(fig, path: Path) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)


def _write_csv(path: Path, rows: list[dict]) -> None:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    write_text(path, buffer.getvalue())


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


def write_report(
    out: Path, game: str, selfplay: list[dict], train: list[dict], gate: list[dict], evaluation: dict
) -> list[Path]:
    """Write every report file under `out`; return the paths written."""
    gens = generation_rows(selfplay, train, gate)
    fig3 = fig3_rows(evaluation)
    _write_csv(out / "generations.csv", gens)
    _write_csv(out / "fig3.csv", fig3)
    x = [r["generation"] for r in gens]
    threshold = gate[0]["threshold"] if gate else 0.5

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
    _save(fig, out / "loss.png")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    colors = ["tab:green" if r["promoted"] else "tab:gray" for r in gens]
    ax.bar(x, [r["gate_score"] for r in gens], color=colors)
    ax.axhline(threshold, color="tab:red", linestyle="--", label=f"threshold {threshold}")
    ax.set(
        xlabel="generation", ylabel="candidate's pairwise score vs best", ylim=(0, 1), title="gate (green: promoted)"
    )
    ax.legend()
    _save(fig, out / "gate.png")

    levels = [r["opponent_rollouts"] for r in fig3]
    rollouts = evaluation["rollouts"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(levels, [r["alphazero_score"] for r in fig3], "o-", label=f"AlphaZero ({rollouts} rollouts)")
    ax.plot(levels, [r["opponent_score_vs_alphazero"] for r in fig3], "s-", label="UCT opponents")
    _log_levels(ax, levels)
    ax.set(xlabel="opponent UCT rollouts", ylabel="mean score per game", title="fig. 3a: AlphaZero vs UCT")
    ax.legend()
    _save(fig, out / "fig3a.png")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(levels, [r["alphazero_difference"] for r in fig3], "o-", label=f"AlphaZero ({rollouts} rollouts)")
    ax.plot(levels, [r["control_difference"] for r in fig3], "s-", label=f"control UCT ({rollouts} rollouts)")
    ax.axhline(0, color="black", linewidth=0.8)
    _log_levels(ax, levels)
    ax.set(
        xlabel="opponent UCT rollouts",
        ylabel="own score - opponents' score",
        title="fig. 3b: score difference",
    )
    ax.legend()
    _save(fig, out / "fig3b.png")

    verdict = (
        "at least as well as" if evaluation["alphazero_at_least_control_everywhere"] else "NOT at least as well as"
    )
    lines = [
        f"# AlphaZero report: {game}",
        "",
        f"{len(gens)} generations. The final champion at {rollouts} rollouts scores {verdict} the control UCT at "
        f"{rollouts} rollouts against every UCT opponent level (fig. 3b).",
        "",
        "## Training loss",
        "![loss](loss.png)",
        "",
        "## Generations",
        _markdown_table(gens),
        "",
        "![gate](gate.png)",
        "",
        "## Seed 000 experiments",
        f"Mean score per game over every seat permutation, {evaluation['fig3a'][0]['games']} games per level.",
        "",
        _markdown_table(fig3),
        "",
        "![fig3a](fig3a.png)",
        "",
        "![fig3b](fig3b.png)",
        "",
        *_oracle_section(evaluation),
    ]
    write_text(out / "report.md", "\n".join(lines))
    return [
        out / name
        for name in ("report.md", "loss.png", "gate.png", "fig3a.png", "fig3b.png", "generations.csv", "fig3.csv")
    ]


def _oracle_section(evaluation: dict) -> list[str]:
    """Two-player Pig: the champion's win rate against exact and classic strategies."""
    rows = evaluation.get("pig_oracle")
    if not rows:
        return []
    table = [
        {
            "opponent": r["opponent"],
            "champion_win_rate": round(r["score"], 4),
            "ci95": f"{r['ci95_low']:.3f} to {r['ci95_high']:.3f}",
            "games": r["games"],
        }
        for r in rows
    ]
    return [
        "## Oracle: two-player Pig",
        f"The champion at {evaluation['rollouts']} rollouts, without noise, against the optimal policy (value "
        "iteration; optimal against optimal wins 50%) and a fixed hold threshold, half the games in each seat.",
        "",
        _markdown_table(table),
        "",
    ]


def _markdown_table(rows: list[dict]) -> str:
    header = "| " + " | ".join(rows[0]) + " |"
    rule = "| " + " | ".join("---" for _ in rows[0]) + " |"
    body = ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    return "\n".join([header, rule, *body])
