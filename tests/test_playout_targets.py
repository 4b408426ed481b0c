"""Value targets mixed with greedy playouts (`selfplay.playout_value_weight`, issue 62's lever 6): each
self-play position's target moves toward the mean end value of k greedy playouts from it, drawn from the
part's own stream; off by default, refused in one line for a game without a greedy player."""

import numpy as np
import pytest

from pipeline import seeds
from pipeline.config import ConfigError, ValueParams, parse_params
from pipeline.games import make_game
from pipeline.jobs.selfplay import playout_targets, run_selfplay
from pipeline.matches.arena import GameRecord
from pipeline.nets.senet import initial_network
from pipeline.search.playouts import playout_values


def kingdomino_params(weight: float):
    return parse_params(
        {
            "game": "kingdomino(players=2)",
            "workers": 1,
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "value": {"scheme": "margin"},  # margins: three playouts' values differ
            "search": {"simulations": 4},
            "selfplay": {"games": 2, "parallel_games": 2, "playout_value_weight": weight},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )


def positions(game, count: int, seed: int) -> list:
    """`count` positions of one greedy game, from its start."""
    rng = np.random.default_rng(seed)
    states = [game.initial_state(rng)]
    while len(states) < count:
        states.append(game.step(states[-1], game.greedy_action(states[-1]), rng)[0])
    return states


def test_a_target_is_mixed_with_the_mean_of_k_playouts_from_the_parts_own_stream():
    """u = 0.25, k = 3: each position's target is 0.75 the strategy's + 0.25 the mean of the three
    playouts a fresh generator of the part's seed plays from it, positions in order."""
    params = parse_params(
        {
            "game": "kingdomino(players=2)",
            "value": {"scheme": "margin"},
            "selfplay": {"playout_value_weight": 0.25, "playout_value_playouts": 3},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )
    game = make_game(params.game)
    states = positions(game, 4, seed=5)
    record = GameRecord(seating=["a", "a"], states=states)
    target = np.tile([0.5, -0.5], (4, 1))
    [mixed] = playout_targets(game, [record], [target], params, generation=2, part=7)

    rng = np.random.default_rng(seeds.playout_targets(params.seed, 2, 7))
    repeated = [state for state in states for _ in range(3)]
    played = playout_values(game, repeated, [rng] * len(repeated), ValueParams(scheme="margin")).reshape(4, 3, 2)
    assert len({tuple(value) for value in played[0]}) == 3, "each playout drew rows of its own"
    np.testing.assert_allclose(mixed, 0.75 * target + 0.25 * played.mean(axis=1))


def test_without_a_weight_the_targets_are_the_strategys_own():
    params = parse_params({"game": "kingdomino(players=2)", "generations": [{"gen": 1, "prev": 0}]})
    game = make_game(params.game)
    record = GameRecord(seating=["a", "a"], states=positions(game, 2, seed=0))
    target = np.array([[1.0, -1.0], [1.0, -1.0]])
    assert playout_targets(game, [record], [target], params, generation=1, part=0)[0] is target


def test_self_play_with_playout_targets_is_reproducible_and_moves_the_values():
    """The same seed gives the same samples; the games themselves (states, policies) are the ones
    played without the setting, only the value targets move off the outcome's few values."""
    game = make_game("kingdomino(players=2)")
    mixed = kingdomino_params(0.5)
    plain = kingdomino_params(0.0)
    model = initial_network(game, mixed)
    first = run_selfplay(game, model, mixed, generation=1, progress=False).samples
    second = run_selfplay(game, model, mixed, generation=1, progress=False).samples
    without = run_selfplay(game, model, plain, generation=1, progress=False).samples
    for name in ("states", "policies", "values"):
        np.testing.assert_array_equal(first[name], second[name])
    np.testing.assert_array_equal(first["states"], without["states"])
    np.testing.assert_array_equal(first["policies"], without["policies"])
    assert len(np.unique(without["values"][:, 0])) <= 2 * 2  # the outcome alone: two games, two seats
    assert len(np.unique(first["values"][:, 0])) > len(first["values"]) // 2


def test_playout_targets_for_a_game_without_a_greedy_player_are_one_line():
    asked = {"game": "tictactoe", "selfplay": {"playout_value_weight": 0.5}, "generations": [{"gen": 1, "prev": 0}]}
    with pytest.raises(ConfigError, match=r"selfplay.playout_value_weight: game 'tictactoe' has no player-greedy") as e:
        parse_params(asked)
    assert "\n" not in str(e.value)
