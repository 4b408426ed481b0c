"""`device: auto | cpu | cuda`: networks infer and train where the params say, the device passed with
each player's search settings (no process-wide setting); on a machine without a GPU, auto is the CPU and
cuda is one clear error line. The CUDA checks run where torch sees a GPU."""

import numpy as np
import pytest
import torch

from pipeline.agents.recipes import selfplay_player
from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.jobs.train import train_network
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import NetworkShape, SENet

GPU = torch.cuda.is_available()


@pytest.fixture(params=["connect4", "kingdomino(players=2)"])  # Kingdomino: constant planes as a vector
def network(request):
    game = make_game(request.param)
    torch.manual_seed(0)
    model = SENet(NetworkShape.for_game(game, blocks=1, channels=8, se_reduction=2)).eval()
    rng = np.random.default_rng(0)
    states = [game.initial_state(rng)]
    for _ in range(3):
        states.append(game.step(states[-1], int(rng.choice(game.legal_actions(states[-1]))), rng)[0])
    return game, model, states


def test_a_device_param_outside_auto_cpu_cuda_is_one_line():
    with pytest.raises(ConfigError, match="device"):
        parse_params({"game": "connect4", "device": "tpu", "generations": [{"gen": 1, "prev": 0}]})


@pytest.mark.skipif(GPU, reason="checks the machine without a GPU")
def test_without_a_gpu_auto_is_the_cpu_and_cuda_is_refused(network):
    game, model, states = network
    assert NetworkEvaluator(game, model, runtime="torch", device="auto").network.device.type == "cpu"
    with pytest.raises(ConfigError, match="^device: cuda, but torch sees no GPU"):
        NetworkEvaluator(game, model, device="cuda")


@pytest.mark.skipif(GPU, reason="checks the machine without a GPU")
def test_the_params_device_travels_with_a_players_spec_into_any_process(network):
    game, model, states = network
    data = {"game": game.name, "device": "cuda", "generations": [{"gen": 1, "prev": 0}]}
    spec = selfplay_player(model, parse_params(data))
    assert spec.search.device == "cuda" and "cuda" not in repr(spec.search)  # not in match caches' keys
    with pytest.raises(ConfigError, match="^device: cuda, but torch sees no GPU"):
        spec.build(game)  # as a worker process or a Ray task builds it: the spec alone says where
    spec = selfplay_player(model, parse_params({**data, "device": "cpu"}))
    logits, _ = spec.build(game).search.evaluator.evaluate(states)
    assert logits.shape == (len(states), game.num_actions)


@pytest.mark.skipif(not GPU, reason="torch sees no GPU here")
def test_on_a_gpu_inference_matches_the_cpu_and_leaves_the_model_where_it_was(network):
    game, model, states = network
    cpu_logits, cpu_values = NetworkEvaluator(game, model, device="cpu").evaluate(states)
    evaluator = NetworkEvaluator(game, model, device="cuda")
    logits, values = evaluator.evaluate(states)
    assert evaluator.network.device.type == "cuda" and next(model.parameters()).device.type == "cpu"
    np.testing.assert_allclose(logits, cpu_logits, atol=1e-4)
    np.testing.assert_allclose(values, cpu_values, atol=1e-4)


@pytest.mark.skipif(not GPU, reason="torch sees no GPU here")
def test_training_on_a_gpu_lowers_the_loss_and_returns_the_model_to_the_cpu(network):
    game, model, _ = network
    rng = np.random.default_rng(0)
    n = 256
    samples = {
        "states": (rng.random((n, *game.observation_shape)) < 0.3).astype(np.uint8),
        "policies": rng.dirichlet(np.ones(game.num_actions), size=n).astype(np.float32),
        "values": rng.choice([-1.0, 1.0], size=(n, game.num_players)).astype(np.float32),
        "generations": np.ones(n, dtype=np.int32),
        "scores": np.zeros((n, game.num_players), dtype=np.float32),
    }
    params = parse_params({"game": game.name, "train": {"epochs": 3}, "generations": [{"gen": 1, "prev": 0}]})
    result = train_network(game, model, samples, params.train, seed=0, progress=False, device="cuda")
    assert result.epoch_losses[-1]["loss"] < result.epoch_losses[0]["loss"]
    assert next(model.parameters()).device.type == "cpu"
