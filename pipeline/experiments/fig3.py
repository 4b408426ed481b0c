"""Petosa & Balch, fig. 3a / 3b: the champion and a control UCT, both at `search.simulations`, against UCT
opponents of growing budgets (`evaluate.fig3`), in every seat permutation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.agents.recipes import champion_player
from pipeline.agents.spec import AgentSpec
from pipeline.experiments.base import Experiment, Plan, PlannedMatch, ReportContext, Setting
from pipeline.experiments.sections import Plot, Section, log_levels, plt
from pipeline.matches.arena import difference_interval, mean_score, seat_permutations


@dataclass
class Fig3Result:
    simulations: int  # the champion's and the control's budget
    alphazero: list[dict]  # per level: opponent_rollouts, score, opponent_score, difference, ci95_low/high, games
    control: list[dict]

    def to_json(self) -> dict:
        az = np.array([r["difference"] for r in self.alphazero])
        ctl = np.array([r["difference"] for r in self.control])
        return {
            "fig3a": self.alphazero,
            "fig3b_control": self.control,
            "alphazero_minus_control": (az - ctl).tolist(),
            "alphazero_at_least_control_everywhere": bool((az >= ctl).all()),
        }

    @classmethod
    def read(cls, data: dict) -> Fig3Result | None:
        return cls(data["simulations"], data["fig3a"], data["fig3b_control"]) if data.get("fig3a") else None

    def tracked(self):
        differences = [
            (f"{experiment}_diff_vs_uct{row['opponent_rollouts']}", row["difference"], None)
            for experiment, rows in (("fig3a", self.alphazero), ("fig3b_control", self.control))
            for row in rows
        ]
        lows = [(f"fig3a_diff_low_vs_uct{r['opponent_rollouts']}", r["ci95_low"], None) for r in self.intervals()]
        return differences + lows

    def intervals(self) -> list[dict]:
        """The champion's rows that carry an interval (evaluations before intervals were kept have none)."""
        return [r for r in self.alphazero if "ci95_low" in r]

    def rows(self) -> list[dict]:
        return [
            {
                "opponent_rollouts": a["opponent_rollouts"],
                "alphazero_score": round(a["score"], 4),
                "opponent_score_vs_alphazero": round(a["opponent_score"], 4),
                "alphazero_difference": round(a["difference"], 4),
                "alphazero_ci95": [round(a[k], 4) for k in ("ci95_low", "ci95_high") if k in a],
                "control_difference": round(c["difference"], 4),
            }
            for a, c in zip(self.alphazero, self.control)
        ]

    def headline(self) -> dict[str, float]:
        ahead = {"fig3_ahead": sum(r["alphazero_difference"] > r["control_difference"] for r in self.rows())}
        if not self.intervals():
            return ahead
        return {**ahead, "fig3_surely_above_zero": sum(r["ci95_low"] > 0 for r in self.intervals())}

    def sections(self, context: ReportContext) -> list[Section]:
        rows = self.rows()
        levels, simulations = [r["opponent_rollouts"] for r in rows], self.simulations
        games = self.alphazero[0]["games"]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(levels, [r["alphazero_score"] for r in rows], "o-", label=f"AlphaZero ({simulations} simulations)")
        ax.plot(levels, [r["opponent_score_vs_alphazero"] for r in rows], "s-", label="UCT opponents")
        log_levels(ax, levels)
        ax.set(xlabel="opponent UCT rollouts", ylabel="mean score per game", title="fig. 3a: AlphaZero vs UCT")
        ax.legend()
        a = Plot("fig3a", f"Mean score per game, {games} games per level over every seat permutation.", fig)
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for experiment, marker, label in ((self.alphazero, "o-", "AlphaZero"), (self.control, "s-", "control UCT")):
            ax.errorbar(
                levels,
                [r["difference"] for r in experiment],
                yerr=error_bars(experiment),
                fmt=marker,
                capsize=3,
                label=f"{label} ({simulations} simulations)",
            )
        ax.axhline(0, color="black", linewidth=0.8)
        log_levels(ax, levels)
        ax.set(xlabel="opponent UCT rollouts", ylabel="own score - opponents' score", title="fig. 3b: score difference")
        ax.legend()
        b = Plot(
            "fig3b",
            "Own mean score minus the opponents', for the champion and for a control UCT; bars: 95% intervals.",
            fig,
        )
        return [Section("Petosa & Balch experiments", verdict(rows, simulations), [a, b], [rows])]


def error_bars(rows: list[dict]) -> np.ndarray | None:
    """Matplotlib's (below, above) distances to each level's interval bounds; None without intervals."""
    if not all("ci95_low" in r for r in rows):
        return None
    return np.array([[r["difference"] - r["ci95_low"], r["ci95_high"] - r["difference"]] for r in rows]).T


def verdict(rows: list[dict], simulations: int) -> str:
    """Level by level what the table shows: a single verdict over all levels hid where the champion led."""
    words = []
    for r in rows:
        mine, control = r["alphazero_difference"], r["control_difference"]
        side = "ahead" if mine > control else "behind" if mine < control else "level"
        interval = " ({:+.3f} to {:+.3f})".format(*r["alphazero_ci95"]) if r["alphazero_ci95"] else ""
        words.append(f"{side} at {r['opponent_rollouts']} ({mine:+.3f}{interval} vs {control:+.3f})")
    ahead = sum(r["alphazero_difference"] > r["control_difference"] for r in rows)
    surely = sum(r["alphazero_ci95"][0] > 0 for r in rows if r["alphazero_ci95"])
    bounds = f" Its 95% lower bound is above zero at {surely} of {len(rows)}." if rows[0]["alphazero_ci95"] else ""
    return (
        f"Score difference against each UCT opponent level, the champion against the control UCT, both at "
        f"{simulations} simulations: {'; '.join(words)}. The champion is ahead at {ahead} of {len(rows)} levels "
        f"(Petosa & Balch, fig. 3).{bounds}"
    )


def plan(setting: Setting) -> Plan:
    game, params = setting.game, setting.params
    ev = params.evaluate
    subjects = [
        champion_player("alphazero", setting.champion, params),
        AgentSpec.uct("control", params.search.simulations, ev.c_uct, params.seed + 1),
    ]
    matches = []
    for level in ev.fig3.opponent_rollouts:
        opponent = AgentSpec.uct(f"uct{level}", level, ev.c_uct, params.seed + level)
        for experiment, subject in (("fig3a", subjects[0]), ("fig3b_control", subjects[1])):
            table = seat_permutations([0] + [1] * (game.num_players - 1))
            seatings = table * ev.fig3.games_per_seating
            matches.append(PlannedMatch(experiment, level, [subject, opponent], seatings))
    return Plan(matches, lambda: summarise(matches, params.search.simulations))


def summarise(matches: list[PlannedMatch], simulations: int) -> Fig3Result:
    results: dict[str, list[dict]] = {"fig3a": [], "fig3b_control": []}
    for match in matches:
        subject, opponent = match.agents[0].name, match.agents[1].name
        difference, low, high = difference_interval(match.records, subject, opponent)
        row = {"opponent_rollouts": match.label, "score": mean_score(match.records, subject)}
        row |= {"opponent_score": mean_score(match.records, opponent), "difference": difference}
        results[match.experiment].append({**row, "ci95_low": low, "ci95_high": high, "games": len(match.records)})
    return Fig3Result(simulations, results["fig3a"], results["fig3b_control"])


EXPERIMENT = Experiment("fig3", plan, Fig3Result.read)
