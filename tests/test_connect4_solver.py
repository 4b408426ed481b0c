"""The perfect Connect-4 solver against Pascal Pons' standard test positions (a sample per set)."""

import io

import pytest

from alphazero_games.connect.commands.solve import solve_connect4_lines
from alphazero_games.connect.positions import CONNECT4
from alphazero_games.connect.solvers.connect4 import Connect4Solver
from pipeline.commands.solve import main

DATA = CONNECT4


@pytest.fixture(scope="module")
def solver():
    return Connect4Solver(table_size=(1 << 20) + 7)


def lines(name, count):
    return [line.split() for line in (DATA / name).read_text().splitlines() if line.strip()][:count]


@pytest.mark.parametrize(
    ("name", "count"), [("Test_L3_R1", 60), ("Test_L2_R1", 60), ("Test_L2_R2", 25), ("Test_L1_R1", 60)]
)
def test_exact_scores_match_the_set(solver, name, count):
    for moves, score in lines(name, count):
        assert solver.solve(moves) == int(score), moves


@pytest.mark.parametrize("name", ["cols_L3_R1.txt", "cols_L2_R1.txt"])
def test_per_column_scores_match_the_labels(solver, name):
    for moves, *scores in lines(name, 20):
        assert solver.column_scores(moves) == [int(s) for s in scores], moves


def test_weak_mode_gives_the_signs(solver):
    for moves, score in lines("Test_L2_R2", 15):
        assert solver.solve(moves, weak=True) == (int(score) > 0) - (int(score) < 0), moves


def test_command_reports_bad_lines_and_goes_on(capsys):
    (first, _), (second, _) = lines("Test_L3_R1", 2)  # end-game positions: solved in milliseconds
    assert not solve_connect4_lines(io.StringIO(f"{first}\n4x\n1111111\n\n{second} 7\n"), weak=True)
    out, err = capsys.readouterr()
    assert [line.split()[0] for line in out.splitlines()] == [first, second]
    assert all(int(s) in (-1000, -1, 0, 1) for line in out.splitlines() for s in line.split()[1:])
    assert err.splitlines() == [
        "error: line 2 (4x): move 2: expected a column 1-7, got 'x'",
        "error: line 3 (1111111): move 7: column 1 is full",
    ]


def test_command_exits_with_status_1_after_bad_lines_and_cuts_long_ones(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("4x\n" + "1" * 1_000_000 + "\n"))
    with pytest.raises(SystemExit) as exit:
        main(["connect4", "--weak"])
    assert exit.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    first, second = err.splitlines()
    assert first == "error: line 1 (4x): move 2: expected a column 1-7, got 'x'"
    assert second == f"error: line 2 ({'1' * 57}...): move 7: column 1 is full"
