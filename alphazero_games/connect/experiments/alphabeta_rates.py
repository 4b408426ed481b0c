"""Connect-4 only, Parikh & Wu's appendix table (`evaluate.alphabeta`): champion budgets against
depth-limited alpha-beta, each side first."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.agents.recipes import champion_player
from pipeline.agents.spec import AgentSpec
from pipeline.experiments.base import Experiment, Plan, PlannedMatch, ReportContext, Setting
from pipeline.experiments.sections import Plot, Section, plt
from pipeline.matches.arena import pairwise_score


@dataclass
class AlphaBetaResult:
    simulations: list[int]
    depths: list[int]
    games_per_side: int
    grids: dict[str, list[list[float]]]  # "first", "second", "both": the champion's score per (sims, depth)

    def to_json(self) -> dict:
        table = {"simulations": self.simulations, "depths": self.depths, "games_per_side": self.games_per_side}
        return {"alphabeta": {**table, **self.grids}}

    @classmethod
    def read(cls, data: dict) -> AlphaBetaResult | None:
        if not data.get("alphabeta"):
            return None
        table = data["alphabeta"]
        grids = {side: table[side] for side in ("first", "second", "both")}
        return cls(table["simulations"], table["depths"], table["games_per_side"], grids)

    def tracked(self):
        return []

    def headline(self) -> dict[str, float]:
        return {}

    def sections(self, context: ReportContext) -> list[Section]:
        """The table as a heat map: champion budget x alpha-beta depth."""
        sims, depths = self.simulations, self.depths
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=True)
        for ax, side in zip(axes, ("first", "second", "both")):
            grid = [[self.grids[side][i][j] for j in range(len(depths))] for i in range(len(sims))]
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
            f"Champion against depth-limited alpha-beta (open-threes heuristic), {self.games_per_side} games with "
            "each side first per cell, as in Parikh & Wu's appendix."
        )
        return [Section("Alpha-beta table (Parikh & Wu)", "", [Plot("alphabeta", caption, fig)])]


def plan(setting: Setting) -> Plan:
    table = setting.params.evaluate.alphabeta
    sides = [[0, 1]] * table.games_per_side + [[1, 0]] * table.games_per_side
    matches = []
    for sims in table.simulations:
        subject = champion_player(f"alphazero@{sims}", setting.champion, setting.params, sims)
        for depth in table.depths:
            opponent = AgentSpec(f"alphabeta{depth}", "alphabeta", number=depth)
            matches.append(PlannedMatch("alphabeta", (sims, depth), [subject, opponent], sides))
    return Plan(matches, lambda: summarise(matches, table.simulations, table.depths, table.games_per_side))


def summarise(matches: list[PlannedMatch], simulations: list[int], depths: list[int], half: int) -> AlphaBetaResult:
    grids = {side: [[0.0] * len(depths) for _ in simulations] for side in ("first", "second", "both")}
    for match in matches:
        sims, depth = match.label
        i, j = simulations.index(sims), depths.index(depth)
        subject, opponent = match.agents[0].name, match.agents[1].name
        for side, records in (
            ("first", match.records[:half]),
            ("second", match.records[half:]),
            ("both", match.records),
        ):
            grids[side][i][j] = pairwise_score(records, subject, opponent)
    return AlphaBetaResult(simulations, depths, half, grids)


EXPERIMENT = Experiment("alphabeta", plan, AlphaBetaResult.read)
