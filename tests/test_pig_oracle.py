"""Exact scoring of two-player Pig policies: table against table, and a network's policy head as a table."""

import numpy as np
import pytest
import torch

from alphazero_games.pig.players import hold_at_rolls, network_rolls, optimal_rolls
from alphazero_games.pig.rules import ROLL, PigGame, PigState
from alphazero_games.pig.solver import match_win_probability, solve_pig
from pipeline.nets.senet import NetworkShape, SENet


def test_optimal_against_itself_is_the_solved_value():
    p, rolls = solve_pig(30)
    first, second = match_win_probability(rolls, rolls)
    assert first == pytest.approx(p[0, 0, 0], abs=1e-9)
    assert first + second == pytest.approx(1.0, abs=1e-9)


def test_weaker_tables_lose_to_optimal_and_equal_ones_do_not():
    optimal = optimal_rolls(30)
    hold_20 = np.mean(match_win_probability(hold_at_rolls(30, 20), optimal))
    assert 0.40 < hold_20 < 0.44  # 20,000 simulated games give 41.8% (BENCHMARKS.md)
    assert np.mean(match_win_probability(hold_at_rolls(20, 20), optimal_rolls(20))) == pytest.approx(0.5, abs=1e-9)
    never_rolls = np.zeros_like(optimal)  # banks nothing, so never wins
    assert match_win_probability(never_rolls, optimal) == pytest.approx((0.0, 0.0), abs=1e-9)


def test_network_table_is_the_policy_heads_choice_in_each_seat():
    game = PigGame(2, 12)
    torch.manual_seed(1)
    model = SENet(NetworkShape.for_game(game, blocks=1, channels=8, se_reduction=4)).eval()
    for seat in (0, 1):
        table = network_rolls(game, model, seat, batch=50)
        for own, other, total in [(0, 0, 0), (3, 7, 5), (11, 2, 0), (5, 11, 6)]:
            scores = (own, other) if seat == 0 else (other, own)
            state = PigState(scores, total, seat, 0, None)
            logits = model(torch.from_numpy(game.encode_batch([state])))[0][0]
            assert table[own, other, total] == (int(logits.argmax()) == ROLL)
