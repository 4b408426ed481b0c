"""A teacher for generation 0: a player that needs no network plays itself, its moves become one-hot
policy targets (or, for mce with a temperature, a softmax of its moves' values), and the network fitted
on them plays its moves."""

import numpy as np
import pytest
import torch

from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.jobs.teacher import teach, teacher_samples, teacher_spec
from pipeline.matches.workers import play_match
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import initial_network

KINGDOMINO = "kingdomino(players=2,fit=1)"


def tiny(game_name=KINGDOMINO, **teacher):
    return parse_params(
        {
            "game": game_name,
            "workers": 1,
            "teacher": {"player": "greedy", "games": 40, "epochs": 2, **teacher},
            "network": {"blocks": 1, "channels": 16, "se_reduction": 2},
            "train": {"augment": "random", "learning_rate": 0.003},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )


def test_a_teachers_every_move_is_recorded_one_hot_and_is_its_own_move():
    game = make_game(KINGDOMINO)
    spec = teacher_spec(game, tiny())
    record = play_match(game.name, [spec], [[0, 0]], [5], 1, 1, record_policies=True).records[0]
    assert len(record.policies) == len(record.actions) > 40  # every move, none left out
    for state, policy, action in zip(record.states, record.policies, record.actions):
        assert policy.sum() == 1 and policy[action] == 1
        assert action == game.greedy_action(state)
    assert set(record.root_values) == {None}  # its values are the outcomes, not a search's


def test_a_taught_network_plays_the_teachers_moves():
    game = make_game(KINGDOMINO)
    params = tiny(games=200)
    torch.manual_seed(0)
    model = initial_network(game, params)
    untaught = agreement(game, NetworkEvaluator(game, initial_network(game, params).eval()))
    spent = teach(game, model, params, progress=False)
    taught = agreement(game, NetworkEvaluator(game, model.eval()))
    assert taught > untaught + 0.2, (taught, untaught)  # 0.69 against 0.34 when written
    assert spent["simulations"] == 0 and spent["hours"] > 0  # greedy searches nothing; its games and fit took time


def agreement(game, evaluator) -> float:
    """How often the raw policy's favourite move is greedy's, over positions of greedy games it never saw."""
    teacher = teacher_spec(game, tiny())
    records = play_match(game.name, [teacher], [[0, 0]] * 4, [99], 4, 1, record_policies=True).records
    states = [s for r in records for s in r.states]
    logits, _ = evaluator.evaluate(states)
    chosen = [int(np.argmax(np.where(game.legal_mask(s), p, -np.inf))) for s, p in zip(states, logits)]
    return float(np.mean([c == game.greedy_action(s) for c, s in zip(chosen, states)]))


def test_mce_with_a_temperature_teaches_a_softmax_of_its_moves_values_and_plays_its_best():
    game = make_game(KINGDOMINO)
    params = tiny(player="mce:40", temperature=0.1, value_weight=0.5)
    spec = teacher_spec(game, params)
    records = play_match(game.name, [spec], [[0, 0]], [5], 1, 1, record_policies=True).records
    record = records[0]
    assert len(record.policies) == len(record.actions)
    soft = 0
    for state, policy, action, root in zip(record.states, record.policies, record.actions, record.root_values):
        legal = game.legal_mask(state)
        assert policy.sum() == pytest.approx(1, abs=1e-5) and not policy[~legal].any()
        assert action == int(np.argmax(policy))  # it plays the move it values most
        assert root.shape == (2,) and -1 <= root.min() and root.max() <= 1
        soft += legal.sum() > 1 and policy.max() < 0.99
    assert soft > 10  # most choices spread over several moves (placements worth the same, close picks)
    samples = teacher_samples(game, records, params)
    outcome = game.scores(record.final_state)  # the run's scheme, win_loss: the game's own scores
    expected = rotate_to_mover(0.5 * outcome + 0.5 * record.root_values[0], record.policy_movers[0])
    assert samples["values"][0] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("teacher", "message"),
    [
        ({"player": "bogus"}, "teacher.player: unknown player 'bogus'"),
        ({"player": "alphabeta:3"}, "teacher.player: "),  # alpha-beta plays Connect-4 only
        ({"temperature": 0.1}, "teacher.temperature: only mce gives soft targets"),
        ({"player": "mce:10", "value_weight": 0.5}, "teacher.value_weight: the teacher's values come with"),
    ],
)
def test_a_teacher_the_grammar_or_the_game_refuses_is_one_line_naming_the_field(teacher, message):
    with pytest.raises(ConfigError, match=message):
        teacher_spec(make_game(KINGDOMINO), tiny(**teacher))


def test_a_teacher_and_a_warm_start_are_refused_together():
    with pytest.raises(ConfigError, match="teacher.player: generation 0 is taught or warm-started, not both"):
        parse_params(
            {
                "game": "tictactoe",
                "warm_start": "x.ckpt",
                "teacher": {"player": "random"},
                "generations": [{"gen": 1, "prev": 0}],
            }
        )
