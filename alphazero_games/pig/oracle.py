"""Two-player Pig only (`evaluate.pig_oracle`): the champion against the optimal policy and "hold at
N", by play and, for its policy head alone, exactly."""

from __future__ import annotations

from dataclasses import dataclass

from alphazero_games.pig.players import hold_at_rolls, network_rolls, optimal_rolls
from alphazero_games.pig.rules import PigGame
from alphazero_games.pig.solver import match_win_probability
from pipeline.agents.recipes import champion_player
from pipeline.agents.spec import AgentSpec
from pipeline.config import Params
from pipeline.experiments.base import Experiment, Plan, PlannedMatch, ReportContext, Setting
from pipeline.experiments.sections import Section
from pipeline.matches.arena import score_interval
from pipeline.nets.senet import SENet


@dataclass
class PigOracleResult:
    simulations: int  # the champion's budget
    played: list[dict]  # per opponent: opponent, score, ci95_low, ci95_high, games
    exact: list[dict]  # per opponent: opponent, moving_first, moving_second, score (the policy head alone)

    def to_json(self) -> dict:
        return {"pig_oracle": self.played, "pig_oracle_policy_exact": self.exact}

    @classmethod
    def read(cls, data: dict) -> PigOracleResult | None:
        if not data.get("pig_oracle"):
            return None
        return cls(data["simulations"], data["pig_oracle"], data.get("pig_oracle_policy_exact", []))

    def tracked(self):
        return [(f"win_rate_vs_{row['opponent']}", row["score"], None) for row in self.played] + [
            (f"policy_head_exact_win_rate_vs_{row['opponent']}", row["score"], None) for row in self.exact
        ]

    def headline(self) -> dict[str, float]:
        optimal = [row["score"] for row in self.played if row["opponent"] == "optimal"]
        return {"win_vs_optimal": round(optimal[0], 4)} if optimal else {}

    def sections(self, context: ReportContext) -> list[Section]:
        """The champion's win rate against exact and classic strategies."""
        rows = [
            {
                "opponent": r["opponent"],
                "champion_win_rate": round(r["score"], 4),
                "ci95": f"{r['ci95_low']:.3f} to {r['ci95_high']:.3f}",
                "games": r["games"],
            }
            for r in self.played
        ]
        exact = [
            {
                "opponent": r["opponent"],
                "policy_head_win_rate": round(r["score"], 4),
                "moving_first": round(r["moving_first"], 4),
                "moving_second": round(r["moving_second"], 4),
            }
            for r in self.exact
        ]
        text = (
            f"The champion at {self.simulations} simulations, without noise, against the optimal policy (value "
            "iteration; optimal against optimal wins 50%) and a fixed hold threshold, half the games in each seat. "
            "Second table: the champion's policy head alone (no search), its win probability computed exactly."
        )
        return [Section("Oracle: two-player Pig", text, tables=[rows, exact] if exact else [rows])]


def plan(setting: Setting) -> Plan:
    game, params = setting.game, setting.params
    oracle = params.evaluate.pig_oracle
    subject = champion_player("alphazero", setting.champion, params)
    opponents = [
        AgentSpec("optimal", "optimal"),
        AgentSpec(f"hold_at_{oracle.hold_at}", "hold", number=oracle.hold_at),
    ]
    seatings = [[0, 1], [1, 0]] * oracle.games_per_seat
    matches = [PlannedMatch("pig_oracle", o.name, [subject, o], seatings) for o in opponents]
    exact = exact_pig_oracle(game, setting.champion, params)

    def summarise() -> PigOracleResult:
        rows = [{"opponent": m.label, **score_interval(m.records, m.agents[0].name, m.label)} for m in matches]
        return PigOracleResult(params.search.simulations, rows, exact)

    return Plan(matches, summarise)


def exact_pig_oracle(game: PigGame, champion: SENet, params: Params) -> list[dict]:
    """The champion's policy head alone (no search) against the same oracles, scored exactly: a figure
    without sampling error, which separates what the network learnt from what search adds."""
    hold_at = params.evaluate.pig_oracle.hold_at
    opponents = {"optimal": optimal_rolls(game.goal), f"hold_at_{hold_at}": hold_at_rolls(game.goal, hold_at)}
    first_seat, second_seat = (network_rolls(game, champion, seat) for seat in (0, 1))
    rows = []
    for name, rolls in opponents.items():
        first = match_win_probability(first_seat, rolls)[0]
        second = match_win_probability(second_seat, rolls)[1]
        rows.append({"opponent": name, "moving_first": first, "moving_second": second, "score": (first + second) / 2})
    return rows


EXPERIMENT = Experiment("pig_oracle", plan, PigOracleResult.read)
