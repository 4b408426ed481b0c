"""Gating (the Connect-4 bot post): the new network plays the best so far over every seating where both sit at the
table; it is promoted if its pairwise score reaches the threshold."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline import seeds
from pipeline.agents.recipes import head_to_head_player
from pipeline.config import Params
from pipeline.matches.arena import mixed_seatings, pairwise_outcomes
from pipeline.matches.workers import Workers, play_match
from pipeline.nets.senet import SENet


@dataclass
class GateResult:
    score: float  # share of (candidate, best) seat pairs the candidate outranked; ties count half
    outcomes: dict[str, float]  # win / draw / loss shares of those pairs (the Connect-4 bot post's curves)
    games: int
    promoted: bool
    seconds: float

    @property
    def metrics(self) -> dict[str, float]:
        outcomes = {f"gate_{kind}": share for kind, share in self.outcomes.items()}
        headline = {"gate_score": self.score, "gate_games": self.games, "promoted": float(self.promoted)}
        return {**headline, **outcomes, "gate_seconds": self.seconds}


def run_gate(game, candidate: SENet, best: SENet, params: Params, generation: int, progress=True) -> GateResult:
    # Noise and a few sampled opening moves keep repeated seatings from replaying one game (the Connect-4 bot post).
    specs = [head_to_head_player("candidate", candidate, params), head_to_head_player("best", best, params)]
    result = play_match(
        game.name,
        specs,
        mixed_seatings(game.num_players) * params.gate.games_per_seating,
        seed=seeds.gate_games(params.seed, generation),
        parallel=params.selfplay.parallel_games,
        workers=Workers.from_params(params),
        progress=f"gate gen {generation}" if progress else None,
    )
    outcomes = pairwise_outcomes(result.records, "candidate", "best")
    score = outcomes["win"] + outcomes["draw"] / 2
    return GateResult(score, outcomes, result.games, score >= params.gate.threshold, result.seconds)
