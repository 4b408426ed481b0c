"""Score as an auxiliary target (issue 62's lever 4, KataGo's score head): self-play samples carry each
seat's final points, a network with a score head learns them beside policy and value, and search and
inference never read the head."""

import numpy as np
import pytest
import torch

from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.jobs.selfplay import final_points, run_selfplay
from pipeline.jobs.train import train_network
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import SENet, initial_network, with_score_head


def kingdomino_params(score_weight=1.0):
    return parse_params(
        {
            "game": "kingdomino(players=2)",
            "workers": 1,
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "search": {"simulations": 4},
            "selfplay": {"games": 2, "parallel_games": 2},
            "train": {"score_weight": score_weight, "epochs": 3, "augment": False},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )


def test_self_play_samples_carry_each_seats_final_points_from_the_movers_seat():
    params = kingdomino_params()
    game = make_game(params.game)
    model = initial_network(game, params)
    assert model.score_head is not None
    samples = run_selfplay(game, model, params, generation=1, progress=False).samples
    scores = samples["scores"]
    assert scores.shape == samples["values"].shape and np.abs(scores).max() > 0
    np.testing.assert_allclose(scores.sum(axis=1), 0.0, atol=1e-5)  # points above the table's mean
    # a game's samples share its final points, each seen from its mover: two seats, so +x or -x
    assert len(np.unique(np.round(np.abs(scores[:, 0]), 5))) <= 2


def test_final_points_are_margins_over_the_mean_in_clear_win_gaps_and_zero_without_margins():
    game = make_game("kingdomino(players=4)")
    rng = np.random.default_rng(0)
    state = game.initial_state(rng)
    while not game.is_terminal(state):
        state, _ = game.step(state, int(rng.choice(game.legal_actions(state))), rng)
    points = game.margins(state)
    np.testing.assert_allclose(final_points(game, state), (points - points.mean()) / game.margin_scale())
    tictactoe = make_game("tictactoe")
    assert not final_points(tictactoe, tictactoe.initial_state()).any()


def test_a_fit_with_a_score_weight_lowers_the_score_loss_and_reports_it():
    params = kingdomino_params()
    game = make_game(params.game)
    model = initial_network(game, params)
    samples = run_selfplay(game, model, params, generation=1, progress=False).samples
    result = train_network(game, model, samples, params.train, seed=0, progress=False)
    losses = [epoch["score_loss"] for epoch in result.epoch_losses]
    assert result.score_loss == losses[-1] and losses[-1] < losses[0]
    plain = kingdomino_params(score_weight=0.0)
    assert initial_network(game, plain).score_head is None
    assert train_network(game, initial_network(game, plain), samples, plain.train, 0, progress=False).score_loss is None


def test_search_reads_the_same_network_with_or_without_a_score_head():
    params = kingdomino_params()
    game = make_game(params.game)
    headed = initial_network(game, params).eval()
    plain = with_score_head(headed, False)
    assert plain.score_head is None and with_score_head(plain, True).score_head is not None
    states = [game.initial_state(np.random.default_rng(seed)) for seed in range(3)]
    for runtime in ("torch", "onnxruntime"):
        with_head = NetworkEvaluator(game, headed, runtime=runtime, device="cpu").evaluate(states)
        without = NetworkEvaluator(game, plain, runtime=runtime, device="cpu").evaluate(states)
        for a, b in zip(with_head, without, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-5)
    x = torch.from_numpy(game.encode_batch(states))
    assert isinstance(headed, SENet) and headed.forward_with_scores(x)[2].shape == (3, 2)


def test_a_score_weight_for_a_game_without_points_is_one_line():
    with pytest.raises(ConfigError, match=r"train.score_weight: game 'tictactoe' defines no points") as refused:
        parse_params({"game": "tictactoe", "train": {"score_weight": 0.5}, "generations": [{"gen": 1, "prev": 0}]})
    assert "\n" not in str(refused.value)


def test_a_warm_start_adds_a_score_head_to_a_network_trained_without_one(tmp_path):
    from pipeline.nets.checkpoint import save_checkpoint
    from stages.init import starting_network

    plain = kingdomino_params(score_weight=0.0)
    game = make_game(plain.game)
    trained = initial_network(game, plain).eval()
    save_checkpoint(tmp_path / "plain.ckpt", trained, game.name, "")
    params = kingdomino_params().model_copy(update={"warm_start": str(tmp_path / "plain.ckpt")})
    started = starting_network(game, params).eval()
    assert started.score_head is not None
    x = torch.from_numpy(game.encode_batch([game.initial_state(np.random.default_rng(1))]))
    for a, b in zip(started(x), trained(x), strict=True):
        torch.testing.assert_close(a, b)
