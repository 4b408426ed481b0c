"""Connect-4 only, Parikh & Wu fig. 5 (`evaluate.solver_games`): games against the perfect solver from
the openings of Pons' Test_L1_R2, the champion to move and waiting; how many moves it lasts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from alphazero_games.connect.experiments.pons import positions_dir
from pipeline.agents.recipes import champion_player
from pipeline.agents.spec import AgentSpec
from pipeline.experiments.base import Experiment, Plan, PlannedMatch, ReportContext, Setting
from pipeline.experiments.sections import Section
from pipeline.matches.arena import pairwise_score


@dataclass
class SolverGamesResult:
    rows: list[dict]  # per budget and side: simulations, champion, games, score, perfect_play_score, losses, ...

    def to_json(self) -> dict:
        return {"solver_games": self.rows}

    @classmethod
    def read(cls, data: dict) -> SolverGamesResult | None:
        return cls(data["solver_games"]) if data.get("solver_games") else None

    def tracked(self):
        return []

    def headline(self) -> dict[str, float]:
        return {}

    def sections(self, context: ReportContext) -> list[Section]:
        rows = [{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()} for r in self.rows]
        text = (
            "Games against the perfect solver (Parikh & Wu fig. 5): the first player can force a win, so the champion "
            "loses as second player at best; `moves_to_loss` counts the champion's moves in the games it lost."
        )
        return [Section("Against the perfect solver", text, tables=[rows])]


def read_openings(game, path: Path, count: int) -> list[tuple[str, object, int]]:
    """The first `count` positions of a test file as (moves, state, perfect-play sign for the side to move)."""
    openings = []
    for number, line in enumerate(path.read_text().splitlines()[:count], start=1):
        try:
            moves, score = line.split()[:2]
            state = game.initial_state()
            for ch in moves:
                state, _ = game.step(state, game.parse_move(state, ch))
        except ValueError as err:
            raise ValueError(f"{path}: line {number}: expected 'MOVES SCORE' ({err})") from None
        openings.append((moves, state, int(np.sign(int(score)))))
    return openings


def plan(setting: Setting) -> Plan | str:
    """Each opening twice: champion to move, then the solver to move (seat 0 moved first at ply 0)."""
    game, params = setting.game, setting.params
    opening_file = positions_dir(params.evaluate.benchmark.data_dir) / "Test_L1_R2"
    if not opening_file.exists():
        return f"Games against the solver: no opening file {opening_file} (evaluate.benchmark.data_dir)."
    openings = read_openings(game, opening_file, params.evaluate.solver_games.games_per_side)
    matches = []
    for sims in params.evaluate.solver_games.simulations:
        subject = champion_player(f"alphazero@{sims}", setting.champion, params, sims)
        solver = AgentSpec("solver", "solver")
        for side in ("to_move", "waiting"):
            seatings, starts = [], []
            for _, state, _ in openings:
                champion_seat = state.mover if side == "to_move" else 1 - state.mover
                seatings.append([0, 1] if champion_seat == 0 else [1, 0])
                starts.append(state)
            matches.append(PlannedMatch("solver_games", (sims, side), [subject, solver], seatings, starts=starts))
    return Plan(matches, lambda: summarise(matches, openings))


def summarise(matches: list[PlannedMatch], openings) -> SolverGamesResult:
    rows = []
    for match in matches:
        sims, side = match.label
        subject = match.agents[0].name
        lost_after = []
        first = 0 if side == "to_move" else 1  # the champion's moves are every other ply from the opening
        for record in match.records:
            if record.scores[record.seating.index(subject)] < 0:
                lost_after.append((len(record.actions) + 1 - first) // 2)
        perfect = [sign if side == "to_move" else -sign for _, _, sign in openings]
        rows.append(
            {
                "simulations": sims,
                "champion": "to move" if side == "to_move" else "waiting",
                "games": len(match.records),
                "score": pairwise_score(match.records, subject, "solver"),
                "perfect_play_score": float(np.mean([(p + 1) / 2 for p in perfect])),
                "losses": len(lost_after),
                "moves_to_loss": float(np.mean(lost_after)) if lost_after else float("nan"),
            }
        )
    return SolverGamesResult(rows)


EXPERIMENT = Experiment("solver_games", plan, SolverGamesResult.read)
