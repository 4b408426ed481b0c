"""Seed 000's two experiments for the champion: AlphaZero at its rollouts against UCT opponents of
increasing rollouts over every seat permutation (fig. 3a), and the same for a control UCT given
AlphaZero's rollouts (fig. 3b)."""

from __future__ import annotations

import numpy as np

from pipeline.agents import PlayConfig, uct_agent
from pipeline.arena import GameRecord, mean_score, play_games, seat_permutations
from pipeline.config import Params
from pipeline.nets.senet import SENet
from pipeline.selfplay import alphazero_agent


def _match_scores(records: list[GameRecord], player: str, opponent: str) -> dict[str, float]:
    mine, theirs = mean_score(records, player), mean_score(records, opponent)
    return {"score": mine, "opponent_score": theirs, "difference": mine - theirs, "games": len(records)}


def run_evaluation(game, champion: SENet, params: Params, progress=True) -> dict:
    """Per opponent level: mean score per game of the subject and of its opponents, for both subjects."""
    ev, rollouts = params.evaluate, params.search.rollouts
    alphazero = alphazero_agent(game, champion, params, PlayConfig(simulations=rollouts), "alphazero")
    control = uct_agent(game, rollouts, seed=params.seed + 1, c_uct=ev.c_uct, name="control")
    matches = []  # (experiment, level, subject name, opponent name, seatings)
    for level in ev.opponent_rollouts:
        for experiment, subject in (("fig3a", alphazero), ("fig3b_control", control)):
            opponent = uct_agent(game, level, seed=params.seed + 2 + level, c_uct=ev.c_uct, name=f"uct{level}")
            seatings = seat_permutations([subject] + [opponent] * (game.num_players - 1)) * ev.games_per_seating
            matches.append((experiment, level, subject.name, opponent.name, seatings))
    all_seatings = [s for *_, seatings in matches for s in seatings]
    records, stats = play_games(
        game, all_seatings, seed=[params.seed, 3], parallel=ev.parallel_games, progress="evaluate" if progress else None
    )
    results: dict = {"rollouts": rollouts, "opponent_rollouts": list(ev.opponent_rollouts), "seconds": stats.seconds}
    start = 0
    for experiment, level, subject, opponent, seatings in matches:
        chunk = records[start : start + len(seatings)]
        start += len(seatings)
        results.setdefault(experiment, []).append(
            {"opponent_rollouts": level, **_match_scores(chunk, subject, opponent)}
        )
    az = np.array([r["difference"] for r in results["fig3a"]])
    ctl = np.array([r["difference"] for r in results["fig3b_control"]])
    results["alphazero_minus_control"] = (az - ctl).tolist()
    results["alphazero_at_least_control_everywhere"] = bool((az >= ctl).all())
    return results
