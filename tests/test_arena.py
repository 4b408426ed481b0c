"""Matches between agents: seatings, scoring, reproducibility, and real strength differences."""

import numpy as np

from pipeline.agents import RandomAgent, uct_agent
from pipeline.arena import GameRecord, mean_score, mixed_seatings, pairwise_score, play_games, seat_permutations
from pipeline.games import make_game


def test_mixed_seatings_cover_every_assignment_with_both_agents():
    game = make_game("tictacmo")
    a, b = RandomAgent(game, "a"), RandomAgent(game, "b")
    seatings = mixed_seatings(3, a, b)
    assert len(seatings) == 6
    assert all({x.name for x in s} == {"a", "b"} for s in seatings)
    assert len(seat_permutations([a, b, b])) == 3
    assert len(seat_permutations([a, b])) == 2


def test_pairwise_score_counts_ties_as_half():
    records = [
        GameRecord(["new", "old", "old"], scores=np.array([1.0, -1.0, -1.0])),
        GameRecord(["old", "new", "new"], scores=np.array([0.0, 0.0, 0.0])),
    ]
    # game 1: new beats both olds (2 pairs); game 2: two ties (2 pairs, half each)
    assert pairwise_score(records, "new", "old") == 3 / 4
    assert mean_score(records, "new") == 1 / 3


def test_same_seed_gives_the_same_games():
    game = make_game("tictacmo")

    def games():
        uct, rnd = uct_agent(game, 20, seed=4), RandomAgent(game)
        records, _ = play_games(game, seat_permutations([uct, rnd, rnd]) * 2, seed=11, parallel=4)
        return [r.actions for r in records]

    assert games() == games()


def test_uct_with_rollouts_beats_random_play():
    game = make_game("tictactoe")
    uct, rnd = uct_agent(game, 200, seed=0), RandomAgent(game)
    records, stats = play_games(game, seat_permutations([uct, rnd]) * 10, seed=1, parallel=20)
    assert stats.games == 20
    assert mean_score(records, "uct200") > 0.6
    assert all(r.scores[r.seating.index("uct200")] >= 0 for r in records)  # never loses
