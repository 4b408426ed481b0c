"""ONNX Runtime for search on the CPU (`search.runtime`): torch's answers for every game, exports cached
by the weights and rebuilt where damaged or another network's, the runtime picked by the settings, and
`export` for users."""

import hashlib
import logging
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline import champions
from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.nets import network_evaluator, onnx_runtime
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint
from pipeline.nets.int8 import calibration_positions
from pipeline.nets.network_evaluator import NetworkEvaluator, TorchNetwork, inference_runtime
from pipeline.nets.onnx_runtime import OnnxNetwork, cached_onnx, export_key, onnx_bytes
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.plumbing.threads import use_threads

GAMES = [
    "tictactoe",
    "tictacmo",
    "connect4",
    "connect3x3",
    "pig",
    "kingdomino(players=4,fit=1)",
    "kingdomino(players=2)",
]


def network(game, seed=0, blocks=2, channels=16):
    torch.manual_seed(seed)
    return SENet(NetworkShape.for_game(game, blocks, channels, 4)).eval()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ALPHAZERO_ONNX_CACHE", str(tmp_path / "onnx"))
    return tmp_path / "onnx"


@pytest.mark.parametrize("name", GAMES)
def test_onnx_runtime_answers_as_torch_does_for_every_game(name, cache):
    game = make_game(name)
    model = network(game)
    states = calibration_positions(game, 40, seed=3)
    onnx = NetworkEvaluator(game, model, runtime="onnxruntime")
    torch_ = NetworkEvaluator(game, model, runtime="torch")
    assert isinstance(onnx.network, OnnxNetwork) and isinstance(torch_.network, TorchNetwork)
    for batch in (states[:1], states):  # one position, as a timed move asks, and a batch, as self-play does
        (logits, values), (expected_logits, expected_values) = onnx.evaluate(batch), torch_.evaluate(batch)
        assert logits.dtype == np.float32 and logits.shape == expected_logits.shape
        np.testing.assert_allclose(logits, expected_logits, atol=1e-4)
        np.testing.assert_allclose(values, expected_values, atol=1e-4)


def test_auto_takes_onnx_runtime_for_float32_on_the_cpu_and_torch_for_bfloat16(monkeypatch):
    game = make_game("tictactoe")
    model = network(game, blocks=1, channels=8)
    assert isinstance(NetworkEvaluator(game, model).network, OnnxNetwork)
    monkeypatch.setattr(network_evaluator, "native_bfloat16", lambda: True)
    assert isinstance(NetworkEvaluator(game, model, "bfloat16").network, TorchNetwork)
    assert isinstance(NetworkEvaluator(game, model, "bfloat16", "torch").network, TorchNetwork)
    with pytest.raises(ConfigError, match="^search.runtime: onnxruntime runs float32 on the CPU; use torch or auto"):
        NetworkEvaluator(game, model, "bfloat16", "onnxruntime")


def test_a_runtime_outside_the_three_is_one_line_naming_the_field():
    params = {"game": "tictactoe", "search": {"runtime": "tensorrt"}, "generations": [{"gen": 1, "prev": 0}]}
    with pytest.raises(ConfigError, match="search.runtime") as refused:
        parse_params(params)
    assert len(str(refused.value).splitlines()) == 1


def test_the_export_cache_is_keyed_by_the_weights(cache):
    game = make_game("tictactoe")
    first, other = network(game, seed=0, blocks=1, channels=8), network(game, seed=1, blocks=1, channels=8)
    assert cached_onnx(first, game) == cached_onnx(network(game, seed=0, blocks=1, channels=8), game)
    assert len(list(cache.glob("*.onnx"))) == 1  # the same weights: one export
    assert cached_onnx(other, game) != cached_onnx(first, game)
    with torch.no_grad():
        first.stem.weight[0, 0, 0, 0] += 1.0  # one weight changed
    cached_onnx(first, game)
    assert len(list(cache.glob("*.onnx"))) == 3
    assert len({export_key(first, game), export_key(other, game)}) == 2


@pytest.mark.parametrize("damage", ["flipped", "truncated", "missing"])
def test_a_damaged_or_missing_export_is_exported_again_never_played(damage, cache):
    game = make_game("tictactoe")
    model = network(game, blocks=1, channels=8)
    exported = cached_onnx(model, game)
    [path] = cache.glob("*.onnx")
    data = bytearray(path.read_bytes())
    if damage == "flipped":
        data[len(data) // 2 : len(data) // 2 + 8] = bytes(8)  # inside the weights: it would still load
        path.write_bytes(bytes(data))
    elif damage == "truncated":
        path.write_bytes(bytes(data[:100]))
    else:
        path.unlink()
    assert cached_onnx(model, game) == exported
    assert [p.read_bytes() for p in cache.glob("*.onnx")] == [exported]
    states = calibration_positions(game, 8)
    logits, values = OnnxNetwork.of_model(model, game)(game.encode_batch(states))
    with torch.no_grad():
        expected = model(torch.from_numpy(game.encode_batch(states)).float())
    np.testing.assert_allclose(logits, expected[0].numpy(), atol=1e-4)


def torch_answers(model, planes):
    with torch.no_grad():
        return [answer.numpy() for answer in model(torch.from_numpy(planes))]


@pytest.mark.parametrize("name", ["tictactoe", "kingdomino(players=4,fit=1)"])
def test_another_networks_export_under_these_weights_key_is_exported_again_never_played(name, cache, caplog):
    game = make_game(name)
    mine, theirs = network(game, seed=0, blocks=1, channels=8), network(game, seed=1, blocks=1, channels=8)
    cached_onnx(mine, game)
    [real] = cache.glob("*.onnx")
    poison = onnx_bytes(theirs, game)  # the same shape, other weights, named as a file of mine would be
    (cache / f"{export_key(mine, game)}-{hashlib.sha256(poison).hexdigest()[:16]}.onnx").write_bytes(poison)
    real.unlink()
    planes = game.encode_batch(calibration_positions(game, 8, seed=1)).astype(np.float32)
    assert not np.allclose(torch_answers(theirs, planes)[0], torch_answers(mine, planes)[0], atol=1e-2)
    with caplog.at_level(logging.WARNING, logger="pipeline.nets.onnx_runtime"):
        answers = OnnxNetwork.of_model(mine, game)(planes)
    for answer, expected in zip(answers, torch_answers(mine, planes)):
        np.testing.assert_allclose(answer, expected, atol=1e-4)
    assert [p.read_bytes() for p in cache.glob("*.onnx")] == [onnx_bytes(mine, game)]  # the poison is gone
    [warning] = caplog.messages
    assert "does not answer as its weights do; exported again" in warning and "\n" not in warning


def test_a_cached_file_that_is_no_graph_is_exported_again(cache):
    game = make_game("tictactoe")
    model = network(game, blocks=1, channels=8)
    junk = b"not an onnx graph"  # named by its own digest, as the old scheme would accept
    cache.mkdir(parents=True)
    (cache / f"{export_key(model, game)}-{hashlib.sha256(junk).hexdigest()[:16]}.onnx").write_bytes(junk)
    assert cached_onnx(model, game) == onnx_bytes(model, game)
    assert [p.read_bytes() for p in cache.glob("*.onnx")] == [onnx_bytes(model, game)]


def test_the_same_weights_hit_the_cache_without_exporting_again(cache, monkeypatch):
    game = make_game("kingdomino(players=4,fit=1)")
    exports = []
    export = onnx_runtime.onnx_bytes
    monkeypatch.setattr(onnx_runtime, "onnx_bytes", lambda *args: exports.append(1) or export(*args))
    first = OnnxNetwork.of_model(network(game, blocks=1, channels=8), game)
    [path] = cache.glob("*.onnx")
    os.utime(path, (1e9, 1e9))  # so that the hit's touch shows
    second = OnnxNetwork.of_model(network(game, blocks=1, channels=8), game)  # equal weights, another model object
    assert len(exports) == 1 and second.graph == first.graph and path.stat().st_mtime > 1e9
    assert len(second._sessions) == 1  # the session that verified the file is the one search runs
    planes = game.encode_batch(calibration_positions(game, 4)).astype(np.float32)
    np.testing.assert_allclose(second(planes)[0], first(planes)[0], atol=1e-6)


def test_a_killed_exports_temporary_file_is_pruned_a_live_ones_kept(cache):
    game = make_game("tictactoe")
    cache.mkdir(parents=True)
    killed, live = cache / ".0123abcd-4567ef.onnx.a1b2c3d4.tmp", cache / ".89abcdef-0123ab.onnx.e5f6a7b8.tmp"
    other = cache / "notes.tmp"  # not a name of the cache's: left alone
    for path in (killed, live, other):
        path.write_bytes(bytes(1000))
    hours_ago = time.time() - 2 * 3600
    os.utime(killed, (hours_ago, hours_ago))
    os.utime(other, (hours_ago, hours_ago))
    cached_onnx(network(game, blocks=1, channels=8), game)  # an export prunes
    assert not killed.exists() and live.exists() and other.exists()
    assert len(list(cache.glob("*.onnx"))) == 1


def test_an_unwritable_cache_costs_an_export_not_the_answers(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("ALPHAZERO_ONNX_CACHE", str(blocker / "onnx"))  # under a file: cannot be made
    game = make_game("tictactoe")
    model = network(game, blocks=1, channels=8)
    assert cached_onnx(model, game) == onnx_bytes(model, game)


@pytest.mark.parametrize("odd", ["fifo", "folder", "read-only"])
def test_an_odd_thing_under_an_entrys_name_costs_an_export_not_a_hang_or_a_traceback(cache, odd, monkeypatch):
    """A named pipe (reading it waited for ever), a folder, or a stale entry a read-only cache cannot
    remove (root's writes pass any mode, so the refusal is the filesystem's, made here): the answers as
    the weights give them, from an export of this process."""
    game = make_game("tictactoe")
    model = network(game, blocks=1, channels=8)
    exported = cached_onnx(model, game)
    [path] = cache.glob("*.onnx")
    if odd == "read-only":
        path.write_bytes(b"stale")
        unlink = Path.unlink

        def refused_here(self, missing_ok=False):
            if self == path:
                raise PermissionError(13, "Read-only file system", str(self))
            unlink(self, missing_ok)

        monkeypatch.setattr(Path, "unlink", refused_here)
    else:
        path.unlink()
        os.mkfifo(path) if odd == "fifo" else path.mkdir()
    assert cached_onnx(model, game) == exported


def test_sessions_follow_the_threads_asked_for(cache):
    game = make_game("tictactoe")
    onnx = OnnxNetwork.of_model(network(game, blocks=1, channels=8), game)
    planes = game.encode_batch(calibration_positions(game, 4))
    try:
        use_threads(1)
        onnx(planes)
        use_threads(2)
        onnx(planes)
    finally:
        use_threads(0)
    assert sorted(onnx._sessions) == [1, 2]
    assert onnx._session(2).get_session_options().intra_op_num_threads == 2


def test_export_writes_a_file_that_onnxruntime_alone_loads_with_the_checkpoints_answers(tmp_path, capsys):
    from pipeline.commands import export

    game = make_game("connect4")
    model = network(game)
    save_checkpoint(tmp_path / "c4.ckpt", model, game.name)
    export.main([str(tmp_path / "c4.ckpt"), str(tmp_path / "c4.onnx")])
    assert "c4.onnx: connect4, 2x16 SENet; input planes (batch x " in capsys.readouterr().out
    states = calibration_positions(game, 16)
    np.save(tmp_path / "planes.npy", game.encode_batch(states).astype(np.float32))
    script = textwrap.dedent(
        """
        import sys
        import numpy as np
        import onnxruntime as ort
        session = ort.InferenceSession(sys.argv[1])
        logits, values = session.run(["policy_logits", "values"], {"planes": np.load(sys.argv[2])})
        np.save(sys.argv[3], np.concatenate([logits, values], axis=1))
        assert session.get_modelmeta().custom_metadata_map["game"] == "connect4"
        assert "torch" not in sys.modules and "pipeline" not in sys.modules
        """
    )
    subprocess.run(
        [sys.executable, "-c", script, tmp_path / "c4.onnx", tmp_path / "planes.npy", tmp_path / "out.npy"],
        check=True,
        cwd=tmp_path,
    )
    with torch.no_grad():
        logits, values = model(torch.from_numpy(np.load(tmp_path / "planes.npy")))
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), torch.cat([logits, values], 1).numpy(), atol=1e-4)


def test_export_of_a_missing_checkpoint_or_into_a_folder_is_one_line(tmp_path, capsys):
    from pipeline.commands import export

    with pytest.raises(SystemExit) as exit:
        export.main([str(tmp_path / "none.ckpt"), str(tmp_path / "x.onnx")])
    assert exit.value.code == 1
    assert capsys.readouterr().err.startswith("error: ") and not (tmp_path / "x.onnx").exists()
    with pytest.raises(SystemExit) as exit:
        export.main(["connect4", str(tmp_path)])
    assert exit.value.code == 2 and "is a folder; expected the ONNX file to write" in capsys.readouterr().err


def test_the_docs_onnxruntime_lines_run_on_an_exported_champion(tmp_path, capsys):
    from pipeline.commands import export

    readme = (Path(__file__).parents[1] / "docs" / "commands.md").read_text()
    block = readme.split("With\n  onnxruntime alone:\n\n  ```python\n", 1)[1].split("  ```", 1)[0]
    export.main(["connect4", str(tmp_path / "connect4.onnx")])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(block)], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    metadata, answer = done.stdout.splitlines()
    assert "'game': 'connect4'" in metadata
    champion = NetworkEvaluator(make_game("connect4"), load_checkpoint(champions.checkpoint_path("connect4")))
    logits, values = champion.evaluate([make_game("connect4").initial_state()])
    assert answer.startswith(f"{logits.argmax()} [[")  # the champion's own answer on the empty board


def test_denormal_weights_are_zeroed_for_search_and_stay_in_the_callers_model(cache):
    import onnx
    from onnx import numpy_helper

    game = make_game("connect4")
    model = network(game)
    with torch.no_grad():
        model.stem.weight[:, 0] = 1e-40  # denormal, as weight decay leaves trained weights
    for runtime in ("torch", "onnxruntime"):
        logits, _ = NetworkEvaluator(game, model, runtime=runtime).evaluate(calibration_positions(game, 8))
        with torch.no_grad():
            expected = model(torch.from_numpy(game.encode_batch(calibration_positions(game, 8))).float())[0]
        np.testing.assert_allclose(logits, expected.numpy(), atol=1e-4)
    tiny = np.finfo(np.float32).tiny
    weights = [numpy_helper.to_array(w) for w in onnx.load_from_string(cached_onnx(model, game)).graph.initializer]
    assert not any(((np.abs(w) < tiny) & (w != 0)).any() for w in weights if w.dtype == np.float32)
    assert model.stem.weight[0, 0, 0, 0].item() == pytest.approx(1e-40, rel=1e-3)  # the caller's, untouched


def test_training_arithmetic_flushes_denormals():
    """Weight decay would otherwise leave denormal weights, tens of times slower to compute with."""
    from pipeline.config import TrainParams
    from pipeline.jobs.train import train_network

    game = make_game("tictactoe")
    rng = np.random.default_rng(0)
    samples = {
        "states": (rng.random((64, *game.observation_shape)) < 0.3).astype(np.uint8),
        "policies": rng.dirichlet(np.ones(game.num_actions), size=64).astype(np.float32),
        "values": rng.choice([-1.0, 1.0], size=(64, game.num_players)).astype(np.float32),
        "generations": np.ones(64, dtype=np.int32),
        "scores": np.zeros((64, game.num_players), dtype=np.float32),
    }
    torch.set_flush_denormal(False)
    tiny_product = lambda: (torch.tensor([1e-30]) * torch.tensor([1e-10])).item()  # noqa: E731
    assert tiny_product() > 0  # denormal arithmetic, as torch starts
    train_network(game, network(game, blocks=1, channels=8), samples, TrainParams(epochs=1), seed=0, progress=False)
    assert tiny_product() == 0.0


def test_bfloat16_on_a_cpu_without_it_searches_in_float32_under_auto_and_says_so(monkeypatch, capsys):
    """Emulated bf16 is 16x slower than float32 (the Connect-4 champion's params ask bf16): auto runs
    float32 in ONNX Runtime, with one line; an explicit torch runtime keeps bf16."""
    game = make_game("tictactoe")
    model = network(game, blocks=1, channels=8)
    monkeypatch.setattr(network_evaluator, "native_bfloat16", lambda: False)
    network_evaluator._say_emulated_bfloat16.cache_clear()
    states = calibration_positions(game, 8, seed=1)
    fallback = NetworkEvaluator(game, model, "bfloat16")
    assert isinstance(fallback.network, OnnxNetwork)
    assert inference_runtime("bfloat16") == "onnxruntime"
    np.testing.assert_allclose(
        fallback.evaluate(states)[1], NetworkEvaluator(game, model).evaluate(states)[1], atol=1e-6
    )
    NetworkEvaluator(game, model, "bfloat16")
    assert capsys.readouterr().err.splitlines() == [
        "search.precision: bfloat16, but this CPU has no bf16 arithmetic: searching in float32"
    ]
    emulated = NetworkEvaluator(game, model, "bfloat16", "torch")
    assert isinstance(emulated.network, TorchNetwork) and emulated.network.dtype == torch.bfloat16
