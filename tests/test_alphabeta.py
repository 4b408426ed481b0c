"""Alpha-beta beyond tactics (those are in test_connect4_agents.py): its randomness comes only from the
game's rng, so a seed replays a match and different games differ; it refuses what it cannot play."""

import pytest

from alphazero_games.connect.players.alphabeta import AlphaBetaAgent
from pipeline.games import make_game
from pipeline.matches.arena import play_games

GAME = make_game("connect4")


def moves(seed):
    first, second = AlphaBetaAgent(GAME, 2, "a"), AlphaBetaAgent(GAME, 3, "b")
    records, _ = play_games(GAME, [[first, second], [second, first]] * 2, seed=seed)
    return [tuple(r.actions) for r in records]


def test_a_seed_replays_the_games_and_games_differ():
    games = moves(7)
    assert games == moves(7)
    assert len(set(games)) > 1, "equal scores (every opening move) are broken at random"


def test_refuses_other_games_and_depths_below_one():
    with pytest.raises(ValueError, match="connect4 only"):
        AlphaBetaAgent(make_game("tictactoe"), 3)
    with pytest.raises(ValueError, match="at least 1"):
        AlphaBetaAgent(GAME, 0)
