"""A user's game that breaks the contract is one line naming the game, the method and what was expected,
before any work (`pipeline/games/contract.py`), and search never waits for ever on one that slips
through: a non-finite value or a state with no legal move that is not terminal is one line too. Every
built-in game passes the same check."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pipeline.commands import match
from pipeline.games import GameFault, game_names, make_game
from pipeline.games.base import StepsLegalMoves, offers
from pipeline.games.contract import check_contract
from pipeline.search import BatchedSearch, Forest, SearchConfig, UniformEvaluator

RULES = """
import numpy as np

from alphazero_games.connect.rules import ConnectGame


class Four(ConnectGame):
    def __init__(self):
        super().__init__("four", rows=4, cols=4, k=3, num_players=2, gravity=True)


class NanScores(Four):
    def scores(self, state):
        return np.full(2, np.nan)


class NoMoves(Four):
    def legal_mask(self, state):
        return np.zeros(self.num_actions, dtype=bool)


class RaisingStep(Four):
    def step(self, state, action, rng=None):
        return 1 / 0


class ThreeScores(Four):
    def scores(self, state):
        return np.zeros(3)


class WrongPlanes(Four):
    def encode(self, state):
        return np.zeros((1, 2, 2), dtype=np.float32)


class NanPlanes(Four):
    def encode(self, state):
        return np.full((4, 4, 4), np.nan, dtype=np.float32)


class BigScores(Four):
    def scores(self, state):
        return np.array([5.0, -7.0])


class HugeActions(Four):
    def __init__(self):
        super().__init__()
        self.num_actions = 10**7


class RaisingInit(Four):
    def __init__(self):
        raise RuntimeError("no board today")


class CountingStep(Four):
    steps = 0

    def step(self, state, action, rng=None):
        CountingStep.steps += 1
        return super().step(state, action, rng)


class RandomStep(Four):
    calls = 0

    def step(self, state, action, rng=None):
        # another legal move at each call, as a draw from an unseeded generator gives, but never by chance the same
        RandomStep.calls += 1
        legal = np.flatnonzero(self.legal_mask(state))
        return super().step(state, int(legal[RandomStep.calls % len(legal)]))
"""


@pytest.fixture
def rules(tmp_path, monkeypatch):
    (tmp_path / "faulty_rules.py").write_text(textwrap.dedent(RULES))
    (tmp_path / "raises_on_import.py").write_text("raise RuntimeError('not today')\n")
    (tmp_path / "bad_syntax.py").write_text("def broken(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    "spec, line",
    [
        ("faulty_rules:NanScores", "scores: expected finite values in [-1, 1], got [nan, nan]"),
        ("faulty_rules:NoMoves", "legal_mask: no legal move in a state that is not terminal after 0 random moves"),
        ("faulty_rules:RaisingStep", "step raised ZeroDivisionError: division by zero"),
        ("faulty_rules:ThreeScores", "scores: expected 2 values, one a seat, got shape (3,)"),
        ("faulty_rules:WrongPlanes", "encode: expected shape (4, 4, 4) (observation_shape), got (1, 2, 2)"),
        ("faulty_rules:BigScores", "scores: expected finite values in [-1, 1], got [5.0, -7.0]"),
        ("faulty_rules:NanPlanes", "encode: expected finite planes, got NaN or inf after 0 random moves"),
        ("faulty_rules:HugeActions", "num_actions: expected 1 to 65,536 (search keeps a row a node), got 10,000,000"),
        ("faulty_rules:RaisingInit", "RaisingInit() raised RuntimeError: no board today"),
        ("raises_on_import:Game", "importing raises_on_import raised RuntimeError: not today"),
        ("bad_syntax:Game", "importing bad_syntax raised SyntaxError"),
    ],
)
def test_a_game_that_breaks_the_contract_is_one_line_naming_the_method(rules, spec, line):
    with pytest.raises(GameFault) as error:
        make_game(spec)
    message = str(error.value)
    assert message.startswith(f"game '{spec}': ") and line in message and "\n" not in message


def test_a_step_that_is_not_the_same_for_the_same_seed_is_refused(rules):
    with pytest.raises(GameFault, match=r"step: two calls with the same seed gave different states"):
        make_game("faulty_rules:RandomStep")


def test_match_of_a_misbehaving_game_is_one_error_line(rules, capsys):
    with pytest.raises(SystemExit) as exit_:
        match.main(["random", "random", "--game", "faulty_rules:NanScores", "--games-per-seating", "1"])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 1 and err.startswith("error: game 'faulty_rules:NanScores': scores:") and "\n" not in err


@pytest.mark.parametrize("variable", [None, "0", "1"])
def test_a_games_fault_shows_its_traceback_only_where_the_environment_asks(rules, tmp_path, variable):
    """`PIPELINE_TRACEBACK=1` prints the traceback down to the game's own line before the error line."""
    env = {k: v for k, v in os.environ.items() if k != "PIPELINE_TRACEBACK"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    if variable is not None:
        env["PIPELINE_TRACEBACK"] = variable
    argv = ["match", "random", "random", "--game", "raises_on_import:Game", "--games-per-seating", "1"]
    done = subprocess.run([sys.executable, "-m", "pipeline", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    line = "error: game 'raises_on_import:Game': importing raises_on_import raised RuntimeError: not today"
    lines = done.stderr.splitlines()
    assert done.returncode == 1 and lines[-1] == line
    if variable == "1":
        assert lines[0] == "Traceback (most recent call last):"
        assert f'File "{tmp_path / "raises_on_import.py"}", line 1, in <module>' in done.stderr
        assert "RuntimeError: not today" in lines and "GameFault" in done.stderr
    else:
        assert lines == [line]


@pytest.mark.parametrize("name, line", [("NanScores", "scores: expected finite values"), ("NoMoves", "no legal move")])
def test_search_on_a_game_that_slips_past_the_check_stops_with_one_line(rules, name, line):
    """Built directly, without the check: search raises instead of walking for ever."""
    import faulty_rules

    game = getattr(faulty_rules, name)()
    game.name = name
    state = game.initial_state()
    if name == "NanScores":  # a position one move from the end of a game: search reaches its scores at once
        for action in (0, 1, 0, 1):
            state, _ = game.step(state, action)
    forest = Forest(game, capacity=64)
    slot = forest.new_tree(state, np.random.default_rng(0)) if name == "NanScores" else None
    with pytest.raises(GameFault, match=line):
        if slot is None:
            forest.new_tree(state, np.random.default_rng(0))
        else:
            BatchedSearch(game, UniformEvaluator(game), SearchConfig()).run(forest, [slot], 32)


@pytest.mark.parametrize("name", [*game_names(), "kingdomino(players=2)", "pig(players=3,goal=20)"])
def test_every_built_in_game_passes_the_check(name):
    check_contract(make_game(name))


def test_a_variant_that_rewrites_step_is_searched_with_its_own_step(rules):
    """The Connect rules offer search a `step_legal` without the legality checks; a user's subclass that
    rewrites `step` must not have it bypassed by the `step_legal` it inherits."""
    assert offers(make_game("faulty_rules:Four"), StepsLegalMoves) and offers(make_game("connect4"), StepsLegalMoves)
    game = make_game("faulty_rules:CountingStep")
    assert not offers(game, StepsLegalMoves)
    steps = type(game).steps
    search = BatchedSearch(game, UniformEvaluator(game), SearchConfig())
    forest = Forest(game, capacity=64)
    search.run(forest, [forest.new_tree(game.initial_state(), np.random.default_rng(0))], 16)
    assert type(game).steps > steps
