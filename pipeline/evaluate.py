"""Seed 000's two experiments for the champion: AlphaZero at its rollouts against UCT opponents of
increasing rollouts over every seat permutation (fig. 3a), and the same for a control UCT given
AlphaZero's rollouts (fig. 3b)."""

from __future__ import annotations

import numpy as np

from pipeline.agents import PlayConfig
from pipeline.arena import GameRecord, mean_score, seat_permutations
from pipeline.config import Params
from pipeline.nets.senet import SENet
from pipeline.parallel import AgentSpec, play_match
from pipeline.search import SearchConfig
from pipeline.selfplay import search_config


def _match_scores(records: list[GameRecord], player: str, opponent: str) -> dict[str, float]:
    mine, theirs = mean_score(records, player), mean_score(records, opponent)
    return {"score": mine, "opponent_score": theirs, "difference": mine - theirs, "games": len(records)}


def _uct(name: str, simulations: int, c_uct: float, seed: int) -> AgentSpec:
    return AgentSpec(name, "uct", PlayConfig(simulations=simulations), SearchConfig(c_uct=c_uct), seed=seed)


def run_evaluation(game, champion: SENet, params: Params, progress=True) -> dict:
    """Per opponent level: mean score per game of the subject and of its opponents, for both subjects."""
    ev, rollouts = params.evaluate, params.search.rollouts
    specs = [
        AgentSpec.alphazero("alphazero", champion, PlayConfig(simulations=rollouts), search_config(params)),
        _uct("control", rollouts, ev.c_uct, params.seed + 1),
    ]
    matches = []  # (experiment, level, subject name, opponent name, seatings)
    for level in ev.opponent_rollouts:
        for experiment, subject in (("fig3a", 0), ("fig3b_control", 1)):
            specs.append(_uct(f"uct{level}", level, ev.c_uct, params.seed + len(specs)))
            table = [subject] + [len(specs) - 1] * (game.num_players - 1)
            matches.append((experiment, level, specs[subject].name, specs[-1].name, seat_permutations(table)))
    result = play_match(
        game.name,
        specs,
        [s for *_, seatings in matches for s in seatings * ev.games_per_seating],
        seed=[params.seed, 3],
        parallel=ev.parallel_games,
        workers=params.workers,
        progress="evaluate" if progress else None,
    )
    results: dict = {"rollouts": rollouts, "opponent_rollouts": list(ev.opponent_rollouts), "seconds": result.seconds}
    start = 0
    for experiment, level, subject, opponent, seatings in matches:
        count = len(seatings) * ev.games_per_seating
        chunk = result.records[start : start + count]
        start += count
        results.setdefault(experiment, []).append(
            {"opponent_rollouts": level, **_match_scores(chunk, subject, opponent)}
        )
    az = np.array([r["difference"] for r in results["fig3a"]])
    ctl = np.array([r["difference"] for r in results["fig3b_control"]])
    results["alphazero_minus_control"] = (az - ctl).tolist()
    results["alphazero_at_least_control_everywhere"] = bool((az >= ctl).all())
    return results
