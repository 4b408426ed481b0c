"""Experiments for the champion. Seed 000's two: AlphaZero at its rollouts against UCT opponents of
increasing rollouts over every seat permutation (fig. 3a), and the same for a control UCT given
AlphaZero's rollouts (fig. 3b). For two-player Pig also the oracle: win rate against the optimal
policy (optimal against itself wins 50%) and against "hold at N", an equal number of games per seat."""

from __future__ import annotations

import numpy as np

from pipeline.agents import PlayConfig
from pipeline.arena import GameRecord, mean_score, score_interval, seat_permutations
from pipeline.config import Params
from pipeline.games.pig import PigGame
from pipeline.nets.senet import SENet
from pipeline.parallel import AgentSpec, play_match
from pipeline.search import SearchConfig
from pipeline.selfplay import search_config


def _match_scores(records: list[GameRecord], player: str, opponent: str) -> dict[str, float]:
    mine, theirs = mean_score(records, player), mean_score(records, opponent)
    return {"score": mine, "opponent_score": theirs, "difference": mine - theirs, "games": len(records)}


def _uct(name: str, simulations: int, c_uct: float, seed: int) -> AgentSpec:
    return AgentSpec(name, "uct", PlayConfig(simulations=simulations), SearchConfig(c_uct=c_uct), seed=seed)


def has_pig_oracle(game) -> bool:
    return isinstance(game, PigGame) and game.num_players == 2


def run_evaluation(game, champion: SENet, params: Params, progress=True) -> dict:
    """Per opponent level: mean score per game of the subject and of its opponents, for both subjects;
    for two-player Pig, the champion's win rate against the oracles with a 95% interval."""
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
            seatings = seat_permutations(table) * ev.games_per_seating
            matches.append((experiment, level, specs[subject].name, specs[-1].name, seatings))
    if has_pig_oracle(game) and ev.oracle_games_per_seat:
        hold = f"hold_at_{ev.oracle_hold_at}"
        for oracle in (AgentSpec("optimal", "pig_optimal"), AgentSpec(hold, "pig_hold", hold_at=ev.oracle_hold_at)):
            specs.append(oracle)
            seatings = [[0, len(specs) - 1], [len(specs) - 1, 0]]
            matches.append(("pig_oracle", oracle.name, "alphazero", oracle.name, seatings * ev.oracle_games_per_seat))
    result = play_match(
        game.name,
        specs,
        [s for *_, seatings in matches for s in seatings],
        seed=[params.seed, 3],
        parallel=ev.parallel_games,
        workers=params.workers,
        progress="evaluate" if progress else None,
    )
    results: dict = {"rollouts": rollouts, "opponent_rollouts": list(ev.opponent_rollouts), "seconds": result.seconds}
    start = 0
    for experiment, level, subject, opponent, seatings in matches:
        count = len(seatings)
        chunk = result.records[start : start + count]
        start += count
        if experiment == "pig_oracle":
            row = {"opponent": level, **score_interval(chunk, subject, opponent)}
        else:
            row = {"opponent_rollouts": level, **_match_scores(chunk, subject, opponent)}
        results.setdefault(experiment, []).append(row)
    az = np.array([r["difference"] for r in results["fig3a"]])
    ctl = np.array([r["difference"] for r in results["fig3b_control"]])
    results["alphazero_minus_control"] = (az - ctl).tolist()
    results["alphazero_at_least_control_everywhere"] = bool((az >= ctl).all())
    return results
