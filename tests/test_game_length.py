"""A game's length is bounded: a user's game whose end never comes stops `match`, self-play and `play`
with one line naming the game and the move, instead of running for ever; a game that declares a longer
`max_plies` plays on to it."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.agents.base import RandomAgent
from pipeline.games import make_game
from pipeline.games.contract import MAX_PLIES, ply_cap
from pipeline.matches.arena import play_games
from pipeline.plumbing.failures import GameFault

ROOT = Path(__file__).resolve().parents[1]
# The guide's Nim (docs/adding-a-game.md), with a move that puts a stone back: a game may never end.
RULES = '''
import numpy as np
from nim import Nim, NimState


class NeverEnds(Nim):
    """Nim whose last action puts a stone back on the first heap, and that forgets to end: once the heaps
    are empty, putting a stone back is the only move."""

    def __init__(self, rows: int = 2):
        super().__init__(rows)
        self.num_actions += 1

    def legal_mask(self, state):
        return np.concatenate([super().legal_mask(state), [True]])

    def step(self, state, action, rng=None):
        if action == self.num_actions - 1:
            heaps = (state.heaps[0] + 1, *state.heaps[1:])
            return NimState(heaps, 1 - state.mover, state.ply + 1), None
        return super().step(state, action, rng)

    def is_terminal(self, state):
        return False


class LongButBounded(NeverEnds):
    def max_plies(self):
        return 12_000
'''


@pytest.fixture
def rules(tmp_path, monkeypatch):
    """The guide's nim.py and the rules above, in a folder of the user's on Python's path."""
    guide = (ROOT / "docs" / "adding-a-game.md").read_text()
    nim = next(block for block in guide.split("```python")[1:] if "class Nim:" in block).split("```")[0]
    (tmp_path / "nim.py").write_text(nim)
    (tmp_path / "endless.py").write_text(textwrap.dedent(RULES))
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
