"""Value schemes on hand-made final positions."""

from typing import NamedTuple

import numpy as np
import pytest

from pipeline.games.values import terminal_value


class Final(NamedTuple):
    scores: tuple
    margins: tuple = ()


class ScoreGame:
    """A stand-in whose final positions carry given scores and margins (e.g. points on a board)."""

    def margin_scale(self):
        return 10.0

    def scores(self, state):
        return np.array(state.scores, dtype=float)

    def margins(self, state):
        return np.array(state.margins, dtype=float)


GAME = ScoreGame()


def test_win_loss_is_the_game_score():
    assert terminal_value(GAME, Final((1, -1, -1))).tolist() == [1, -1, -1]


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ((1, -1, -1), [1.0, -0.5, -0.5]),  # winner beats both; the two losers tie each other
        ((3, 2, 1), [1.0, 0.0, -1.0]),  # a strict ranking
        ((0, 0, 0), [0.0, 0.0, 0.0]),  # all tied
        ((5, 5, 1, 0), [2 * 2.5 / 3 - 1, 2 * 2.5 / 3 - 1, 2 * 1 / 3 - 1, -1.0]),
        ((1, -1), [1.0, -1.0]),  # two players: same as win/loss
    ],
)
def test_pairwise_rank_points(scores, expected):
    value = terminal_value(GAME, Final(scores), "pairwise_rank")
    assert np.allclose(value, expected)
    assert np.isclose(value.sum(), 0.0)


def test_margin_rewards_a_bigger_win():
    narrow = terminal_value(GAME, Final((1, 0), margins=(21, 20)), "margin")
    wide = terminal_value(GAME, Final((1, 0), margins=(30, 5)), "margin")
    assert 0 < narrow[0] < wide[0] <= 1.0
    assert np.isclose(wide[0], 1.0)  # a gap beyond the scale saturates: all points
    assert np.isclose(narrow.sum(), 0.0)


def test_zero_sum_normalises_inside_the_value_range():
    value = terminal_value(GAME, Final((1, -1, -1)), "win_loss", zero_sum=True)
    assert np.allclose(value, [1.0, -0.5, -0.5]) and np.isclose(value.sum(), 0.0)
    assert terminal_value(GAME, Final((0, 0, 0)), "win_loss", zero_sum=True).tolist() == [0, 0, 0]


def test_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="unknown value scheme 'elo'"):
        terminal_value(GAME, Final((1, -1)), "elo")


def test_params_select_the_scheme_and_refuse_a_margin_the_game_lacks():
    from pipeline.config import ConfigError, parse_params

    base = {"game": "tictacmo", "generations": [{"gen": 1, "prev": 0}]}
    assert parse_params({**base, "value": {"scheme": "pairwise_rank"}}).value.scheme == "pairwise_rank"
    with pytest.raises(ConfigError, match="value.scheme: .*unknown value 'elo'"):
        parse_params({**base, "value": {"scheme": "elo"}})
    with pytest.raises(ConfigError, match="game 'tictacmo' defines no margin"):
        parse_params({**base, "value": {"scheme": "margin"}})


def test_search_backs_up_the_scheme_value_at_the_end_of_the_game():

    from pipeline.config import ValueParams
    from pipeline.games import make_game
    from pipeline.search import BatchedSearch, Forest, SearchConfig, UniformEvaluator

    game = make_game("tictacmo")
    state = game.initial_state()
    for move in [0, 5, 10, 1, 6, 14]:
        state, _ = game.step(state, move)  # X to move, wins at cell 2
    config = SearchConfig(value=ValueParams(scheme="pairwise_rank"))
    forest = Forest(game, 64, end_value=config.end_value(game))
    slot = forest.new_tree(state, np.random.default_rng(0))
    BatchedSearch(game, UniformEvaluator(game), config).run(forest, [slot], 30)
    root = forest.roots[slot]
    winning = forest.children[root, 2]
    assert np.allclose(forest.terminal_values[winning], [1.0, -0.5, -0.5])
