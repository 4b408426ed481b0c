"""The Tic-Tac-Mo max^n solver against a plain-Python max^n over the game's own rules.

The full solve (about 10 s) is left to `python -m pipeline solve tictacmo`; these check positions
with up to seven empty cells, where brute force is quick, and a few hand-made ones.
"""

import random

import numpy as np
import pytest

from alphazero_games.connect.solvers.tictacmo import LINES, TIE_BREAKS, TRANSFORMS, TicTacMoSolver, solve_tictacmo
from pipeline.commands.solve import main as solve_main
from pipeline.games import make_game

GAME = make_game("tictacmo")
X_WINS, O_WINS, A_WINS, DRAW = ([1, -1, -1], [-1, 1, -1], [-1, -1, 1], [0, 0, 0])


def brute_force(state, tie_break):
    """Max^n by exhaustive search: the mover maximises its own score, then the tie-break's key."""
    if state.done:
        return GAME.scores(state)
    m = state.mover
    offset = {"next": 1, "previous": 2}.get(tie_break)
    best, best_key = None, None
    for action in GAME.legal_actions(state):
        value = brute_force(GAME.step(state, action)[0], tie_break)
        key = (value[m], 0 if offset is None else value[(m + offset) % 3])
        if best is None or key > best_key:  # strict: the lowest action wins ties under "first"
            best, best_key = value, key
    return best


def random_position(rng, stones):
    """A live position with `stones` stones from random play, and its moves."""
    while True:
        state, moves = GAME.initial_state(), []
        for _ in range(stones):
            moves.append(rng.choice(GAME.legal_actions(state)))
            state = GAME.step(state, moves[-1])[0]
            if state.done:
                break
        if not state.done:
            return state, moves


@pytest.fixture(scope="module", params=TIE_BREAKS)
def solver(request):
    return TicTacMoSolver(request.param, table_bits=8)  # tiny: the table has to grow on the way


@pytest.mark.parametrize(("stones", "seed"), [(8, 0), (9, 1), (9, 2), (10, 3), (10, 4), (11, 5)])
def test_matches_brute_force(solver, stones, seed):
    state, moves = random_position(random.Random(seed), stones)
    values = solver.move_values(state)
    assert sorted(values) == GAME.legal_actions(state)
    for action, value in values.items():
        child = GAME.step(state, action)[0]
        np.testing.assert_array_equal(value, brute_force(child, solver.tie_break), err_msg=f"{moves} {action}")
    np.testing.assert_array_equal(solver.value(moves), brute_force(state, solver.tie_break))


def test_table_grew_and_kept_its_entries(solver):
    solver.value(random_position(random.Random(6), 7)[1])  # thousands of positions: > 2**8 slots
    assert solver._keys.shape[0] > 1 << 8
    assert solver.positions == int((solver._keys != np.uint32(0xFFFFFFFF)).sum())


def test_immediate_win():
    # X X . . .    X to move: cell 3 (action 2) completes the top row
    # O O . . .
    # A . A . .
    moves = [0, 5, 10, 1, 6, 12]
    solver = TicTacMoSolver()
    values = solver.move_values(moves)
    np.testing.assert_array_equal(values[2], X_WINS)
    np.testing.assert_array_equal(solver.value(moves), X_WINS)


def test_must_block_or_the_next_seat_wins():
    # . A . X .    X to move, no threat of its own; O threatens action 7
    # O O . . .    every other move lets O complete its row at once
    # X . . . A
    moves = [3, 5, 1, 10, 6, 14]
    for tie_break in TIE_BREAKS:
        solver = TicTacMoSolver(tie_break)
        values = solver.move_values(moves)
        for action, value in values.items():
            if action != 7:
                np.testing.assert_array_equal(value, O_WINS, err_msg=str(action))
        assert values[7][0] > -1  # blocking saves X here
        np.testing.assert_array_equal(solver.value(moves), values[7])
        np.testing.assert_array_equal(values[7], brute_force(GAME.step(solver.state(moves), 7)[0], tie_break))


def test_dead_board_is_a_draw():
    # O A A X .    O to move: neither empty cell can complete a line for anyone
    # X O X A X
    # . A X O O
    moves = [7, 0, 8, 9, 13, 1, 12, 6, 11, 3, 14, 2, 5]
    solver = TicTacMoSolver()
    np.testing.assert_array_equal(solver.value(moves), DRAW)
    assert {a: v.tolist() for a, v in solver.move_values(moves).items()} == {4: DRAW, 10: DRAW}


def test_symmetries_map_lines_to_lines():
    lines = {int(m) for m in LINES.ravel() if m}
    assert len(lines) == 20  # 9 across, 5 down, 6 diagonal
    for transform in TRANSFORMS:
        assert {int(transform[m]) for m in lines} == lines


def test_mirror_images_have_equal_values():
    rng = random.Random(5)
    solver = TicTacMoSolver()
    for _ in range(5):
        _, moves = random_position(rng, 6)
        mirrored = [r * 5 + 4 - c for r, c in (divmod(a, 5) for a in moves)]
        np.testing.assert_array_equal(solver.value(moves), solver.value(mirrored))


def test_the_tie_break_picks_the_winner_when_the_mover_is_lost():
    # A . X O .    X to move loses whatever it does; it can only choose whether O or A wins
    # X A . A O
    # . . . X O
    moves = [13, 14, 0, 2, 3, 8, 5, 9, 6]
    expected = {"next": O_WINS, "previous": A_WINS, "first": O_WINS}
    for tie_break in TIE_BREAKS:
        solver = TicTacMoSolver(tie_break)
        np.testing.assert_array_equal(solver.value(moves), expected[tie_break])
        np.testing.assert_array_equal(brute_force(solver.state(moves), tie_break), expected[tie_break])


def test_opening_after_the_centre_is_a_draw():
    solution = solve_tictacmo([7])
    np.testing.assert_array_equal(solution.value, DRAW)
    assert solution.positions > 0 and set(solution.move_values) == set(range(15)) - {7}


def test_cli_prints_value_count_and_time(capsys):
    solve_main(["tictacmo", "--moves", "1 6 11 2 7 13"])
    out = capsys.readouterr().out
    assert "tictacmo max^n value (seats X O A, tie-break next): +1 -1 -1" in out
    assert "positions solved in" in out
