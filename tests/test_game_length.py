"""A game's length is bounded: a user's game whose end never comes stops `match`, self-play and `play`
with one line naming the game and the move, instead of running for ever; a game that declares a longer
`max_plies` plays on to it."""

import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.agents.base import RandomAgent
from pipeline.games import make_game
from pipeline.games.contract import MAX_PLIES, ply_cap
from pipeline.matches.arena import play_games
from pipeline.plumbing.failures import GameFault

ROOT = Path(__file__).resolve().parents[1]
ENDLESS = ROOT / "tests" / "endless_games.py"  # the rules, copied as a user's plugin module


@pytest.fixture
def rules(tmp_path, monkeypatch):
    """The guide's nim.py and the rules above, in a folder of the user's on Python's path."""
    guide = (ROOT / "docs" / "adding-a-game.md").read_text()
    nim = next(block for block in guide.split("```python")[1:] if "class Nim:" in block).split("```")[0]
    (tmp_path / "nim.py").write_text(nim)
    (tmp_path / "endless.py").write_text(ENDLESS.read_text())
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_game_past_its_cap_is_one_fault_naming_the_game_and_the_move(rules):
    game = make_game("endless:NeverEnds")
    assert ply_cap(game) == MAX_PLIES
    agents = [RandomAgent(game, "a"), RandomAgent(game, "b")]
    with pytest.raises(GameFault, match=rf"^game 'endless:NeverEnds': no end after {MAX_PLIES:,} moves"):
        play_games(game, [agents] * 2, seed=0)


def test_a_game_that_declares_a_longer_cap_plays_past_the_default(rules):
    game = make_game("endless:LongButBounded")
    assert ply_cap(game) == 12_000
    agents = [RandomAgent(game, "a"), RandomAgent(game, "b")]
    with pytest.raises(GameFault, match=r"no end after 12,000 moves"):
        play_games(game, [agents], seed=0)


def test_match_with_a_never_ending_game_exits_with_one_line(rules):
    command = [sys.executable, "-m", "pipeline", "match", "random", "random", "--game", "endless:NeverEnds"]
    done = subprocess.run(command, cwd=rules, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert lines and "endless:NeverEnds" in lines[-1] and "no end after 10,000 moves" in lines[-1], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("LateStep", "step raised KeyError: 'heap 9' (at move 401 of a game)"),
        ("LateMask", "legal_mask: no legal move in a state that is not terminal (at move 401 of a game)"),
        ("LateSeat", "to_play: expected a seat 0 to 1, got 5 (at move 401 of a game)"),
    ],
)
def test_a_fault_past_the_checked_moves_is_one_line_naming_the_game_the_method_and_the_move(rules, name, line):
    game = make_game(f"endless:{name}")
    agents = [RandomAgent(game, "a"), RandomAgent(game, "b")]
    with pytest.raises(GameFault) as fault:
        play_games(game, [agents], seed=0)
    assert str(fault.value) == f"game 'endless:{name}': {line}"


def test_planes_of_another_shape_past_the_checked_moves_are_one_line(rules):
    game = make_game("endless:LatePlanes")
    state = game.initial_state()
    for _ in range(400):
        state, _ = game.step(state, game.num_actions - 1)
    assert game.encode_batch([game.initial_state()]).shape == (1, *game.observation_shape)
    with pytest.raises(GameFault, match=r"^game 'endless:LatePlanes': encode_batch: expected shape \(2, 1, 2, 3\)"):
        game.encode_batch([game.initial_state(), state])


def test_a_guarded_game_keeps_its_abilities_and_travels_to_workers_as_its_own_class(rules):
    """The guard is a subclass: what the game offers it still offers, and a pickle names the game's class."""
    import pickle

    from pipeline.games.base import BoundsItsLength, offers

    game = make_game("endless:LongButBounded")
    copy = pickle.loads(pickle.dumps(game))
    assert type(copy) is type(game) and type(game).__name__ == "LongButBounded" and copy.name == game.name
    assert offers(game, BoundsItsLength) and offers(copy, BoundsItsLength)
    late = make_game("endless:LateStep")
    with pytest.raises(GameFault, match="step raised KeyError"):
        pickle.loads(pickle.dumps(late)).step(late.initial_state()._replace(ply=400), 0)


def test_match_through_search_of_a_game_with_a_late_fault_exits_with_one_line(rules):
    command = [sys.executable, "-m", "pipeline", "match", "uct:2", "random", "--game", "endless:LateStep",
               "--games-per-seating", "1"]  # fmt: skip
    done = subprocess.run(command, cwd=rules, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: game 'endless:LateStep': step raised KeyError"), errors


def test_uct_rollouts_of_a_game_that_never_ends_stop_at_its_cap_in_one_line(rules):
    """The game's own random_playout loops until the end that never comes: its moves, counted through
    the guarded `step`, stop at the cap (UCT's rollouts of the issue's `match random uct:5`)."""
    from pipeline.agents.search_agent import uct_agent

    game = make_game("endless:NeverEnds")
    with pytest.raises(GameFault, match=rf"^game 'endless:NeverEnds': random_playout: no end after {MAX_PLIES:,}"):
        play_games(game, [[RandomAgent(game, "a"), uct_agent(game, 5, seed=0, name="b")]], seed=0)
