"""The SENet, Petosa & Balch's loss, training on a fixed batch, and checkpoints that refuse a mismatch."""

import logging
import warnings

import numpy as np
import pytest
import pytorch_lightning as pl
import torch

from pipeline.config import TrainParams
from pipeline.games import make_game
from pipeline.jobs.train import BATCH, train_network
from pipeline.nets.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from pipeline.nets.module import AlphaZeroModule, alphazero_losses
from pipeline.nets.senet import NetworkShape, SENet, deepened, with_constant_planes


def small_net(game, blocks=1, channels=16):
    torch.manual_seed(0)
    return SENet(NetworkShape.for_game(game, blocks=blocks, channels=channels, se_reduction=4))


def fixed_batch(game, n=64, seed=0):
    rng = np.random.default_rng(seed)
    states = (rng.random((n, *game.observation_shape)) < 0.3).astype(np.uint8)
    policies = rng.dirichlet(np.full(game.num_actions, 0.1), size=n).astype(np.float32)
    values = rng.choice([-1.0, 1.0], size=(n, game.num_players)).astype(np.float32)
    generations, scores = np.ones(n, dtype=np.int32), np.zeros((n, game.num_players), dtype=np.float32)
    return {"states": states, "policies": policies, "values": values, "generations": generations, "scores": scores}


@pytest.mark.parametrize("name", ["tictacmo", "connect4", "kingdomino(players=3)"])
def test_heads_have_one_output_per_action_and_per_seat(name):
    game = make_game(name)
    logits, values = small_net(game)(torch.zeros(5, *game.observation_shape))
    assert logits.shape == (5, game.num_actions)
    assert values.shape == (5, game.num_players)
    assert values.abs().max() <= 1.0


def test_training_lowers_the_loss_on_a_fixed_batch():
    game = make_game("tictacmo")
    model = small_net(game)
    batch = fixed_batch(game)
    tensors = [torch.from_numpy(batch[k].astype(np.float32)) for k in ("states", "policies", "values")]

    def loss():
        model.eval()
        with torch.no_grad():
            return sum(alphazero_losses(model, *tensors)).item()

    before = loss()
    repeated = {k: np.concatenate([v] * 20) for k, v in batch.items()}  # 20 steps per epoch, same batch
    result = train_network(
        game, model, repeated, TrainParams(epochs=3, batch_size=64, augment=False), seed=0, progress=False
    )
    after = loss()
    assert after < 0.85 * before, (before, after)
    assert result.epoch_losses[-1]["loss"] < result.epoch_losses[0]["loss"]


def test_a_deepened_network_computes_the_same_and_its_new_blocks_learn():
    game = make_game("connect4")
    model = small_net(game, blocks=2)
    batch = fixed_batch(game)
    train_network(game, model, batch, TrainParams(epochs=1, batch_size=16, augment=False), seed=0, progress=False)
    model.eval()
    grown = deepened(model, 4).eval()
    states = torch.from_numpy(fixed_batch(game, n=8, seed=1)["states"].astype(np.float32))
    with torch.no_grad():
        for before, after in zip(model(states), grown(states), strict=True):
            assert torch.allclose(before, after, atol=1e-6)
    assert grown.shape.blocks == 4 and grown.tower[3].body[5].weight.abs().max() == 0
    train_network(game, grown, batch, TrainParams(epochs=1, batch_size=16, augment=False), seed=0, progress=False)
    assert grown.tower[3].body[5].weight.abs().max() > 0
    with pytest.raises(ValueError, match="blocks: 1 is fewer than the 2 blocks"):
        deepened(model, 1)


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_cosine_schedule_anneals_the_rate_to_zero_over_the_fit(schedule):
    game = make_game("tictactoe")
    batch = fixed_batch(game) | {"weights": np.ones(64, dtype=np.float32)}
    tensors = [torch.from_numpy(batch[k].astype(np.float32)) for k in BATCH]  # as the stage's batches come
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors), batch_size=16)
    module = AlphaZeroModule(small_net(game), learning_rate=1e-3, lr_schedule=schedule)
    trainer = pl.Trainer(max_epochs=2, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(module, loader)
    rate = trainer.optimizers[0].param_groups[0]["lr"]
    assert rate == pytest.approx(1e-3 if schedule == "constant" else 0.0, abs=1e-9)


def test_training_prints_no_lightning_notices_or_deprecations(caplog):
    """Lightning's device lines, its litlogger tip and torch's LeafSpec deprecation repeated in every stage."""
    game = make_game("tictactoe")
    caplog.set_level(logging.INFO)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_network(game, small_net(game), fixed_batch(game), TrainParams(epochs=1), seed=0, progress=False)
    lightning = [r.getMessage() for r in caplog.records if "lightning" in r.name]
    assert lightning == []
    assert [str(w.message) for w in caught if issubclass(w.category, (FutureWarning, DeprecationWarning))] == []


def test_checkpoint_round_trip_keeps_the_weights(tmp_path):
    game = make_game("tictacmo")
    model = small_net(game)
    save_checkpoint(tmp_path / "net.ckpt", model, game.name)
    loaded = load_checkpoint(tmp_path / "net.ckpt", make_game("tictacmo"), model.shape)
    x = torch.rand(3, *game.observation_shape)
    model.eval()
    for ours, theirs in zip(model(x), loaded(x)):
        assert torch.allclose(ours, theirs)


def test_constant_planes_are_a_vector_and_a_plain_stem_converts_to_the_same_function_off_the_edge():
    """Kingdomino's rows, kings and phase are one number over the board: the network reads them as a
    vector, and a network trained with them convolved becomes one that does, equal on every square the
    convolution's zero padding did not cut."""
    game = make_game("kingdomino(players=4)")
    assert game.constant_planes() == 150 and small_net(game).shape.constant_planes == 150
    torch.manual_seed(0)
    plain = SENet(NetworkShape(*game.observation_shape, game.num_actions, game.num_players, 1, 16, 4)).eval()
    converted = with_constant_planes(plain, game.constant_planes()).eval()
    assert converted.shape == small_net(game).shape
    rng = np.random.default_rng(0)
    states, state = [], game.initial_state(rng)
    while not game.is_terminal(state):
        states.append(state)
        state = game.step(state, int(rng.choice(game.legal_actions(state))), rng)[0]
    planes = torch.from_numpy(game.encode_batch(states[::10]))
    with torch.no_grad():
        before, after = plain.embed(planes), converted.embed(planes)
    assert torch.allclose(before[..., 1:-1, 1:-1], after[..., 1:-1, 1:-1], atol=1e-5)
    assert not torch.allclose(before, after, atol=1e-3)  # the edge differs: a new function there
    with pytest.raises(ValueError, match="already reads"):
        with_constant_planes(converted, game.constant_planes())


def test_a_checkpoint_from_before_constant_planes_loads_as_the_plain_network(tmp_path):
    game = make_game("kingdomino(players=2)")
    torch.manual_seed(0)
    plain = SENet(NetworkShape(*game.observation_shape, game.num_actions, game.num_players, 1, 8, 4)).eval()
    save_checkpoint(tmp_path / "net.ckpt", plain, game.name)
    payload = torch.load(tmp_path / "net.ckpt", weights_only=True)
    del payload["shape"]["constant_planes"]  # as written before networks read constant planes
    torch.save(payload, tmp_path / "old.ckpt")
    loaded = load_checkpoint(tmp_path / "old.ckpt", game)
    assert loaded.shape == plain.shape and loaded.shape.constant_planes == 0
    x = torch.rand(2, *game.observation_shape)
    with torch.no_grad():
        assert all(torch.equal(a, b) for a, b in zip(plain(x), loaded(x)))


def test_checkpoint_for_another_game_fails_clearly(tmp_path):
    game = make_game("tictacmo")
    save_checkpoint(tmp_path / "net.ckpt", small_net(game), game.name)
    with pytest.raises(CheckpointError, match="trained for game 'tictacmo', but 'connect4'"):
        load_checkpoint(tmp_path / "net.ckpt", make_game("connect4"))
    other = NetworkShape.for_game(game, blocks=2, channels=16, se_reduction=4)
    with pytest.raises(CheckpointError, match="network shape"):
        load_checkpoint(tmp_path / "net.ckpt", make_game("tictacmo"), other)


def test_corrupt_checkpoint_fails_clearly(tmp_path):
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="bad.ckpt: not a readable checkpoint"):
        load_checkpoint(bad)
    with pytest.raises(CheckpointError, match="not found"):
        load_checkpoint(tmp_path / "missing.ckpt")


def test_a_checkpoint_with_damaged_weight_bytes_fails_on_its_checksum(tmp_path):
    game = make_game("tictacmo")
    model = small_net(game)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.fill_(0.375)  # a pattern to find in the file
    path = tmp_path / "net.ckpt"
    save_checkpoint(path, model, game.name)
    load_checkpoint(path, game)  # whole: loads
    data = bytearray(path.read_bytes())
    at = data.find(np.float32(0.375).tobytes() * 4)
    data[at] ^= 0xFF  # one weight's byte flipped, as a bad disk or a cut copy does
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="net.ckpt: damaged checkpoint .its weights do not match their checksum"):
        load_checkpoint(path, game)


class Payload:
    """What a malicious checkpoint pickles: unpickling it would run a shell command."""

    def __reduce__(self):
        import os

        return (os.system, ("touch pwned",))


def test_a_checkpoint_holding_code_is_refused_unread_without_torch_s_unsafe_advice(tmp_path, capfd, monkeypatch):
    import pickle

    monkeypatch.chdir(tmp_path)
    raw, saved = tmp_path / "raw.ckpt", tmp_path / "saved.ckpt"
    raw.write_bytes(pickle.dumps(Payload(), protocol=4))
    torch.save({"format": 1, "game": "tictactoe", "state_dict": {"w": Payload()}}, saved)
    for path in (raw, saved):
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(path)
        assert str(info.value).startswith(f"{path}: not a readable checkpoint (weights-only reader: ")
        assert "weights_only" not in str(info.value) and "will likely succeed" not in str(info.value)
    assert capfd.readouterr().err == "", "no warning from torch before the error line"
    assert not (tmp_path / "pwned").exists()


def test_the_game_a_checkpoint_names_is_read_without_torch_and_without_running_its_code(tmp_path, monkeypatch):
    """`stored_game` lets a command check its arguments against a file's game before torch is imported; a
    pickle that names code to run is read as inert placeholders, and a damaged file is None (the full
    load's line then says why)."""
    from pipeline.nets.header import stored_game

    monkeypatch.chdir(tmp_path)
    game = make_game("tictacmo")
    save_checkpoint(tmp_path / "net.ckpt", small_net(game), game.name)
    torch.save({"format": 1, "game": "tictactoe", "state_dict": {"w": Payload()}}, tmp_path / "code.ckpt")
    (tmp_path / "cut.ckpt").write_bytes((tmp_path / "net.ckpt").read_bytes()[:500])
    assert stored_game(tmp_path / "net.ckpt") == game.name
    assert stored_game(tmp_path / "code.ckpt") == "tictactoe" and not (tmp_path / "pwned").exists()
    assert [stored_game(tmp_path / name) for name in ("cut.ckpt", "missing.ckpt", ".")] == [None, None, None]


def test_equal_weights_make_equal_files(tmp_path):
    game = make_game("tictacmo")
    save_checkpoint(tmp_path / "a.ckpt", small_net(game), game.name)
    save_checkpoint(tmp_path / "b" / "gen_1.ckpt", small_net(game), game.name)
    assert (tmp_path / "a.ckpt").read_bytes() == (tmp_path / "b" / "gen_1.ckpt").read_bytes()


def test_truncated_checkpoints_and_folders_fail_in_one_line(tmp_path):
    game = make_game("tictacmo")
    save_checkpoint(tmp_path / "net.ckpt", small_net(game), game.name)
    whole = (tmp_path / "net.ckpt").read_bytes()
    cut = tmp_path / "cut.ckpt"
    for length in [1, 100, *range(1000, len(whole), 4999), len(whole) - 1]:  # 0 bytes: tests/test_analyse_play.py
        cut.write_bytes(whole[:length])
        with pytest.raises(CheckpointError, match="cut.ckpt: not a readable checkpoint") as info:
            load_checkpoint(cut)
        assert "\n" not in str(info.value), length
    with pytest.raises(CheckpointError, match="is a folder; expected a checkpoint file"):
        load_checkpoint(tmp_path)


@pytest.mark.parametrize(
    "change",
    [
        {"shape": None},
        {"shape": {"blocks": 1}},
        {"shape": "in_channels=4"},
        {"shape_field": ("channels", "8")},
        {"shape_field": ("blocks", 0)},
        {"shape_field": ("rows", True)},
        {"shape_field": ("colour", 3)},
        {"shape_field": ("constant_planes", -1)},
        {"shape_field": ("constant_planes", 1000)},
        {"game": None},
        {"state_dict": [1, 2]},
    ],
)
def test_checkpoint_with_a_damaged_payload_fails_in_one_line(tmp_path, change):
    game = make_game("tictacmo")
    save_checkpoint(tmp_path / "net.ckpt", small_net(game), game.name)
    payload = torch.load(tmp_path / "net.ckpt", weights_only=True)
    if "shape_field" in change:
        name, value = change.pop("shape_field")
        payload["shape"][name] = value
    payload.update(change)
    torch.save(payload, tmp_path / "bad.ckpt")
    with pytest.raises(CheckpointError, match="bad.ckpt: damaged checkpoint"):
        load_checkpoint(tmp_path / "bad.ckpt")


@pytest.mark.parametrize("name", ["tictacmo", "connect4", "kingdomino(players=2)"])
def test_frozen_inference_model_matches_the_network(name):
    from pipeline.nets.network_evaluator import NetworkEvaluator

    game = make_game(name)
    model = small_net(game, blocks=2).eval()
    evaluator = NetworkEvaluator(game, model)
    rng = np.random.default_rng(0)
    states = [game.initial_state()]
    while len(states) < 7:
        state = states[-1]
        states.append(
            state if game.is_terminal(state) else game.step(state, int(rng.choice(game.legal_actions(state))))[0]
        )
    logits, values = evaluator.evaluate(states)
    with torch.no_grad():
        expected_logits, expected_values = model(torch.from_numpy(game.encode_batch(states)))
    assert np.allclose(logits, expected_logits.numpy(), atol=1e-5)
    assert np.allclose(values, expected_values.numpy(), atol=1e-5)


def test_bfloat16_inference_stays_close_to_float32_and_leaves_the_model_as_it_was():
    """bf16 search (`search.precision`) sees the trained network's outputs to within a few hundredths,
    as float32 numpy arrays, and the caller's model keeps its float32 weights."""
    from pipeline import champions
    from pipeline.agents.recipes import search_config
    from pipeline.agents.search_agent import PlayConfig
    from pipeline.agents.spec import AgentSpec
    from pipeline.config import parse_params

    game = make_game("connect4")
    model = load_checkpoint(champions.checkpoint_path("connect4"))
    rng = np.random.default_rng(0)
    states = []
    while len(states) < 32:
        state = game.initial_state()
        for _ in range(rng.integers(0, 20)):
            if not game.is_terminal(state):
                state, _ = game.step(state, int(rng.choice(game.legal_actions(state))))
        states.append(state)
    one_generation = [{"gen": 1, "prev": 0}]
    search = {"precision": "bfloat16", "runtime": "torch"}  # torch: bf16 even where the CPU emulates it
    params = parse_params({"game": "connect4", "search": search, "generations": one_generation})
    spec = AgentSpec.alphazero("az", model, PlayConfig(simulations=8), search_config(params))
    evaluator = spec._network(game)
    assert evaluator.network.dtype == torch.bfloat16
    logits, values = evaluator.evaluate(states)
    with torch.no_grad():
        expected_logits, expected_values = model(torch.from_numpy(game.encode_batch(states)))
    assert logits.dtype == np.float32 and values.dtype == np.float32
    assert np.abs(logits - expected_logits.numpy()).max() < 0.3
    assert np.abs(values - expected_values.numpy()).max() < 0.1
    assert not np.array_equal(values, expected_values.numpy())  # bf16 arithmetic really ran
    assert all(p.dtype == torch.float32 for p in model.parameters())


@pytest.mark.skipif("x86" not in torch.backends.quantized.supported_engines, reason="int8 needs an x86 CPU")
def test_int8_inference_agrees_with_float32_is_built_once_and_leaves_the_model_as_it_was():
    """int8 search (`search.precision: int8`) picks the trained network's best move on most positions it
    was not calibrated on, its values close; a second evaluator of the same weights reuses the
    quantized network (calibration takes seconds); the caller's model keeps its float32 weights."""
    from pipeline import champions
    from pipeline.nets.int8 import calibration_positions
    from pipeline.nets.network_evaluator import NetworkEvaluator

    game = make_game("connect4")
    model = load_checkpoint(champions.checkpoint_path("connect4"))
    states = calibration_positions(game, 512, seed=1)  # other games than the calibration's
    evaluator = NetworkEvaluator(game, model, "int8")
    assert "quantized" in str(evaluator.network.model.graph)
    logits, values = evaluator.evaluate(states)
    with torch.no_grad():
        expected_logits, expected_values = model(torch.from_numpy(game.encode_batch(states)))
    assert logits.dtype == np.float32 and values.dtype == np.float32
    assert (logits.argmax(1) == expected_logits.numpy().argmax(1)).mean() > 0.9
    assert np.abs(values - expected_values.numpy()).mean() < 0.05
    assert not np.array_equal(values, expected_values.numpy())  # int8 arithmetic really ran
    assert NetworkEvaluator(game, model, "int8").network.model is evaluator.network.model
    assert all(p.dtype == torch.float32 for p in model.parameters())


@pytest.mark.skipif("x86" not in torch.backends.quantized.supported_engines, reason="int8 needs an x86 CPU")
def test_int8_self_play_gives_the_same_games_for_the_same_seed():
    from pipeline.config import parse_params
    from pipeline.jobs.selfplay import run_selfplay

    params = parse_params(
        {
            "game": "pig(players=2,goal=20)",  # chance nodes too
            "workers": 1,
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "search": {"simulations": 8, "precision": "int8"},
            "selfplay": {"games": 4, "parallel_games": 4},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )
    game = make_game(params.game)
    runs = [run_selfplay(game, small_net(game, channels=8), params, generation=1, progress=False) for _ in range(2)]
    assert runs[0].games == 4 and len(runs[0].samples["values"]) > 0
    for name, array in runs[0].samples.items():
        assert np.array_equal(runs[1].samples[name], array), name


def test_a_stopped_training_goes_on_from_its_last_epoch_and_ends_as_an_uncut_one(tmp_path, monkeypatch, caplog):
    """Weights, optimizer, cosine schedule and losses are saved after every epoch; a damaged save is
    reported and training starts over."""
    import copy

    from pipeline.jobs import train

    game = make_game("tictactoe")
    start, batch = small_net(game), fixed_batch(game, n=96)
    params = TrainParams(epochs=3, batch_size=16, lr_schedule="cosine")
    uncut = copy.deepcopy(start)
    expected = train_network(game, uncut, batch, params, seed=3, progress=False)
    saves = []

    def save_then_stop(callback, trainer, module):
        real_save(callback, trainer, module)
        saves.append(trainer.current_epoch)
        if len(saves) == 2:
            raise RuntimeError("stopped")  # a kill after the second epoch's save

    real_save = train._EpochCheckpoint.on_train_epoch_end
    monkeypatch.setattr(train._EpochCheckpoint, "on_train_epoch_end", save_then_stop)
    with pytest.raises(RuntimeError, match="stopped"):
        train_network(game, copy.deepcopy(start), batch, params, seed=3, progress=False, resume=tmp_path)
    monkeypatch.setattr(train._EpochCheckpoint, "on_train_epoch_end", real_save)
    (saved,) = tmp_path.glob("fit.*.ckpt")
    two_epochs = torch.load(saved, weights_only=True)["history"]

    resumed = copy.deepcopy(start)
    result = train_network(game, resumed, batch, params, seed=3, progress=False, resume=tmp_path)
    assert result.epoch_losses[:2] == two_epochs, "the first two epochs were not trained again"
    assert [e["loss"] for e in result.epoch_losses] == pytest.approx([e["loss"] for e in expected.epoch_losses])
    for name, tensor in uncut.state_dict().items():
        assert torch.allclose(resumed.state_dict()[name], tensor, atol=1e-6), name

    saved.write_bytes(saved.read_bytes()[:200])
    again = copy.deepcopy(start)
    train_network(game, again, batch, params, seed=3, progress=False, resume=tmp_path)
    assert "ignoring damaged saved fit" in caplog.text
    assert all(torch.allclose(again.state_dict()[n], t, atol=1e-6) for n, t in uncut.state_dict().items())
