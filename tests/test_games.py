"""Rules cross-checked against OpenSpiel, plus the 3-player games' scores, encoding and symmetries."""

import random

import numpy as np
import pytest

from pipeline.games import IllegalMove, make_game

pyspiel = pytest.importorskip("pyspiel")


@pytest.mark.parametrize(
    ("ours", "theirs", "playouts"), [("tictactoe", "tic_tac_toe", 3000), ("connect4", "connect_four", 2000)]
)
def test_rules_match_openspiel(ours, theirs, playouts):
    game, spiel = make_game(ours), pyspiel.load_game(theirs)
    rng = random.Random(7)
    for _ in range(playouts):
        state, reference = game.initial_state(), spiel.new_initial_state()
        while True:
            assert game.is_terminal(state) == reference.is_terminal()
            if reference.is_terminal():
                assert list(game.scores(state)) == list(reference.returns())
                break
            assert game.to_play(state) == reference.current_player()
            assert game.legal_actions(state) == reference.legal_actions()
            action = rng.choice(game.legal_actions(state))
            state, chance = game.step(state, action)
            assert chance is None
            reference.apply_action(action)


def play(game, moves):
    state = game.initial_state()
    for move in moves:
        state, _ = game.step(state, move)
    return state


def test_tictacmo_three_players_win_and_scores():
    game = make_game("tictacmo")
    assert (game.num_players, game.num_actions, game.observation_shape) == (3, 15, (6, 3, 5))
    # seat 1 (O) takes the middle row 5,6,7 while X and A scatter
    state = play(game, [0, 5, 10, 2, 6, 14, 4, 7])
    assert game.is_terminal(state)
    assert list(game.scores(state)) == [-1, 1, -1]


def test_connect3x3_vertical_three_wins_for_third_seat():
    game = make_game("connect3x3")
    state = play(game, [0, 1, 2, 3, 4, 2, 5, 6, 2])
    assert game.is_terminal(state) and list(game.scores(state)) == [-1, -1, 1]


def test_draw_scores_zero_for_all():
    game = make_game("tictactoe")
    state = play(game, [0, 1, 2, 4, 3, 5, 7, 6, 8])
    assert game.is_terminal(state) and list(game.scores(state)) == [0, 0]


def test_encoding_starts_with_the_mover():
    game = make_game("tictacmo")
    state = play(game, [0, 1])  # seat 2 to move; seat 0 holds cell 0, seat 1 holds cell 1
    planes = game.encode(state)
    assert planes[0].sum() == 0  # mover (seat 2) has no stones
    assert planes[1].ravel()[0] == 1  # next in turn order: seat 0
    assert planes[2].ravel()[1] == 1  # then seat 1
    assert planes[3:].sum(axis=(1, 2)).tolist() == [0, 0, 15]  # turn planes: seat 2 to move


@pytest.mark.parametrize("name", ["tictactoe", "tictacmo", "connect4", "connect3x3"])
def test_symmetries_map_positions_to_positions(name):
    game = make_game(name)
    rng = random.Random(3)
    expected = {"tictactoe": 8, "tictacmo": 4, "connect4": 2, "connect3x3": 2}[name]
    assert len(game.symmetries()) == expected
    for _ in range(50):
        state = game.initial_state()
        for _ in range(rng.randrange(1, 6)):
            if game.is_terminal(state):
                break
            state, _ = game.step(state, rng.choice(game.legal_actions(state)))
        planes, mask = game.encode(state), game.legal_mask(state).astype(np.float32)
        for sym in game.symmetries():
            moved = sym.board(planes)
            # the image of a legal move is legal in the transformed position: stones never overlap
            assert moved.shape == planes.shape
            assert sorted(mask[sym.action_perm]) == sorted(mask)
            assert moved[: game.num_players].sum() == planes[: game.num_players].sum()


def test_connect4_reflection_is_the_mirrored_game():
    game = make_game("connect4")
    moves = [3, 2, 4, 0, 6]
    mirror = next(s for s in game.symmetries() if s.action_perm[0] == 6)
    left, right = play(game, moves), play(game, [6 - m for m in moves])
    assert np.array_equal(mirror.board(game.encode(left)), game.encode(right))


def test_illegal_moves_are_refused_clearly():
    game = make_game("connect4")
    state = play(game, [0] * 6)
    with pytest.raises(IllegalMove, match="column 1"):
        game.step(state, 0)
    with pytest.raises(IllegalMove, match="expected a number"):
        game.parse_move(state, "x")
    assert game.parse_move(state, "2") == 1


def test_unknown_game_names_the_choices():
    with pytest.raises(ValueError, match="unknown game 'chess'.*tictacmo"):
        make_game("chess")


def test_openspiel_moves_are_numbered_from_one_and_shown_with_the_board():
    """As the project's own games: a person types the number the board shows, 1-based."""
    game = make_game("openspiel:tic_tac_toe")
    state = game.initial_state()
    assert game.render(state).splitlines()[-1].startswith("moves: 1 x(0,0), 2 x(0,1)")
    assert (game.parse_move(state, "1"), game.parse_move(state, "x(1,1)"), game.format_move(8)) == (0, 4, "9")
    with pytest.raises(IllegalMove):
        game.parse_move(state, "0")


@pytest.mark.parametrize("name", ["tictacmo", "connect4", "pig", "kingdomino(players=2)"])
def test_offers_answers_as_isinstance_does_for_every_ability(name):
    from pipeline.games.base import HasMargins, PlaysGreedy, PlaysOutInBatches, ReadsDraws, offers

    game = make_game(name)
    for ability in (HasMargins, PlaysGreedy, PlaysOutInBatches, ReadsDraws):
        assert offers(game, ability) == isinstance(game, ability)
    assert offers(make_game("kingdomino(players=2)"), PlaysOutInBatches) and not offers(make_game("pig"), PlaysGreedy)
