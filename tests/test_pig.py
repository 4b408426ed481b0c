"""Pig: transitions cross-checked against OpenSpiel's `pig`, and the optimal policy's known value."""

import random

import numpy as np
import pytest

from alphazero_games.pig.rules import HOLD, ROLL, PigGame
from alphazero_games.pig.solver import hold_thresholds, solve_pig
from pipeline.commands.solve import main
from pipeline.games import IllegalMove

pyspiel = pytest.importorskip("pyspiel")


@pytest.mark.parametrize(("players", "goal"), [(2, 20), (3, 30), (6, 15)])
def test_transitions_match_openspiel(players, goal):
    game = PigGame(players, goal)
    spiel = pyspiel.load_game("pig", {"players": players, "winscore": goal})
    rng = random.Random(players)
    for _ in range(300):
        state, reference = game.initial_state(), spiel.new_initial_state()
        while not reference.is_terminal():
            assert game.to_play(state) == reference.current_player()
            assert game.legal_actions(state) == reference.legal_actions()
            action = rng.choice(game.legal_actions(state))
            reference.apply_action(action)
            face = None
            if reference.is_chance_node():
                outcome = rng.choice([o for o, _ in reference.chance_outcomes()])
                reference.apply_action(outcome)
                face = outcome + 1
            state, key = game.apply(state, action, face)
            assert key == face
        assert game.is_terminal(state)
        winner = int(np.argmax(reference.returns()))
        assert game.scores(state)[winner] == 1 and game.scores(state).sum() == 2 - players


def test_rolling_draws_from_the_generator_and_reports_the_face():
    game = PigGame(2, 20)
    state, key = game.step(game.initial_state(), ROLL, np.random.default_rng(3))
    assert key in range(1, 7)
    assert (state.turn_total, state.mover) == ((key, 0) if key != 1 else (0, 1))
    with pytest.raises(IllegalMove, match="expected roll"):
        game.parse_move(state, "jump")


def test_must_hold_at_the_goal_and_wins():
    game = PigGame(2, 10)
    state, _ = game.apply(game.initial_state(), ROLL, 6)
    state, _ = game.apply(state, ROLL, 5)
    assert game.legal_actions(state) == [HOLD]
    state, _ = game.apply(state, HOLD, None)
    assert game.is_terminal(state) and game.scores(state).tolist() == [1, -1]
    assert game.margins(state).tolist() == [11, 0]


def test_value_iteration_reproduces_neller_and_presser():
    p, rolls = solve_pig(100)
    assert p[0, 0, 0] == pytest.approx(0.5306, abs=5e-5)  # published: first player wins 53.06%
    thresholds = hold_thresholds(rolls)
    assert thresholds[99, 0] == 1  # one point from the goal: any turn total wins, so hold at once
    assert 20 <= thresholds[0, 0] <= 30  # the classic "hold at about 20-25" early in the game


def test_solve_command_prints_the_probability(capsys):
    main(["pig", "--goal", "10", "--policy"])
    out = capsys.readouterr().out
    assert out.startswith("pig goal 10: the first player wins with probability 0.")
    assert "hold once the turn total reaches" in out


@pytest.mark.parametrize("goal", [1, 1_001, 10**12])
def test_a_goal_out_of_bounds_is_one_line_before_a_board_of_that_width(goal, capsys):
    """A goal is a board's width: 10^12 asked for 40 TB and no game began in a minute."""
    from pipeline.commands import match

    with pytest.raises(SystemExit) as stopped:
        match.main(["random", "random", "--game", f"pig(goal={goal})", "--games-per-seating", "1"])
    error = capsys.readouterr().err.strip()
    assert stopped.value.code != 0 and error == f"error: pig: goal must be 2 to 1,000, got {goal:,}"
