"""Issue 82: a checkpoint that lies is refused in one line before it plays: a recorded shape past the limits
params (blocks, channels) and games (actions, observation, seats) have, before a network of that shape is
built; a network that does not fit its game; weights that are not finite."""

import pytest
import torch

from pipeline.games import make_game
from pipeline.nets import CheckpointError
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint
from pipeline.nets.senet import NetworkShape, SENet


@pytest.mark.parametrize(
    ("lie", "message"),
    [
        ({"blocks": 100_000, "channels": 4096}, "recorded shape: blocks: "),
        ({"channels": 100_000}, "recorded shape: channels: "),
        ({"num_actions": 2**20}, "recorded shape: num_actions 1,048,576 is over 65,536"),
        ({"rows": 10_000, "cols": 10_000}, "recorded shape: in_channels x rows x cols"),
        ({"num_players": 1000}, "recorded shape: num_players 1,000 is over 64"),
    ],
)
def test_a_shape_past_the_limits_is_one_line_before_the_network_is_built(tmp_path, monkeypatch, lie, message):
    game = make_game("tictactoe")
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "net.ckpt", SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    payload = torch.load(tmp_path / "net.ckpt", weights_only=True)
    payload["shape"].update(lie)
    torch.save(payload, tmp_path / "lie.ckpt")
    built = []
    monkeypatch.setattr("pipeline.nets.checkpoint.SENet", lambda shape: built.append(shape))
    with pytest.raises(CheckpointError, match=message) as refused:
        load_checkpoint(tmp_path / "lie.ckpt")
    assert "\n" not in str(refused.value) and built == []


def _misfit(tmp_path, **lie) -> str:
    """A Connect-4 checkpoint whose network was built, weights and all, for another shape."""
    game = make_game("connect4")
    shape = NetworkShape.for_game(game, 1, 8, 2)
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "misfit.ckpt", SENet(NetworkShape(**{**shape.to_dict(), **lie})), game.name)
    return str(tmp_path / "misfit.ckpt")


@pytest.mark.parametrize(
    "lie", [{"num_players": 1}, {"num_players": 3}, {"num_actions": 6}, {"in_channels": 7}, {"rows": 5}]
)
@pytest.mark.parametrize("command", ["match", "export"])
def test_a_network_that_does_not_fit_its_game_is_one_line_before_it_plays(tmp_path, capsys, lie, command):
    from pipeline.commands import export, match

    path = _misfit(tmp_path, **lie)
    argv = {"match": [path, "random", "--games-per-seating", "1"], "export": [path, str(tmp_path / "n.onnx")]}
    with pytest.raises(SystemExit) as stopped:
        {"match": match, "export": export}[command].main(argv[command])
    error = capsys.readouterr().err.strip()
    assert stopped.value.code != 0
    assert len(error.splitlines()) == 1 and "does not fit the game" in error, error
    name, value = next(iter(lie.items()))
    assert f"{name} {value} where connect4 has" in error
    assert not (tmp_path / "n.onnx").exists()


@pytest.mark.parametrize("command", ["match", "export"])
def test_weights_that_are_not_finite_are_one_line_in_every_command(tmp_path, capsys, command):
    """A diverged training's network: export wrote it without a word, where match stopped in search."""
    from pipeline.commands import export, match

    game = make_game("tictactoe")
    model = SENet(NetworkShape.for_game(game, 1, 8, 2))
    with torch.no_grad():
        next(model.parameters())[0] = float("nan")
    save_checkpoint(tmp_path / "nan.ckpt", model, game.name)
    path = str(tmp_path / "nan.ckpt")
    argv = {"match": [path, "random", "--games-per-seating", "1"], "export": [path, str(tmp_path / "n.onnx")]}
    with pytest.raises(SystemExit) as stopped:
        {"match": match, "export": export}[command].main(argv[command])
    error = capsys.readouterr().err.strip()
    assert stopped.value.code != 0 and len(error.splitlines()) == 1, error
    assert "hold NaN or infinite values" in error and not (tmp_path / "n.onnx").exists()


def test_a_compressed_archive_is_refused_before_torch_inflates_it(tmp_path):
    """torch.save stores its members as they are: a deflated one (a 5 MB file that inflated to a 1 GB
    tensor) is a file torch did not write, refused before any member is read."""
    import zipfile

    game = make_game("tictactoe")
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "net.ckpt", SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    load_checkpoint(tmp_path / "net.ckpt", game)
    with zipfile.ZipFile(tmp_path / "net.ckpt") as source, zipfile.ZipFile(tmp_path / "bomb.ckpt", "w") as bomb:
        for member in source.infolist():
            bomb.writestr(member.filename, source.read(member), compress_type=zipfile.ZIP_DEFLATED)
    with pytest.raises(CheckpointError, match=r"bomb.ckpt: \S+ is compressed; torch.save writes none; refused$"):
        load_checkpoint(tmp_path / "bomb.ckpt", game)


NO_TORCH = """
import sys
from pipeline.commands import main
try:
    main(sys.argv[1:])
finally:
    print("torch" in sys.modules)
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["match", "FILE", "random"],
        ["play", "FILE", "--seats", "az,human"],
        ["analyse", "FILE"],
        ["export", "FILE", "n.onnx"],
        ["sweep", "--play", "FILE"],
    ],
)
def test_a_lying_checkpoint_is_one_line_before_torch_is_imported(tmp_path, argv):
    """Issue 82: a misfit or inflating file waited for torch's import (1.6-1.9 s on 2 cores, more on a
    loaded machine); its header is read and checked without torch."""
    import os
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    misfit = _misfit(tmp_path, num_players=1)
    _nan(tmp_path, torch.float32)
    with zipfile.ZipFile(misfit) as source, zipfile.ZipFile(tmp_path / "bomb.ckpt", "w") as bomb:
        for member in source.infolist():
            bomb.writestr(member.filename, source.read(member), compress_type=zipfile.ZIP_DEFLATED)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    lies = {misfit: "num_players 1 where connect4 has 2", "bomb.ckpt": "is compressed", "nan.ckpt": "hold NaN"}
    for path, message in lies.items():
        command = [sys.executable, "-c", NO_TORCH, *(path if word == "FILE" else word for word in argv)]
        done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and done.stdout == "False\n", (done.stdout, done.stderr)
        assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
    assert not (tmp_path / "n.onnx").exists()


def _nan(tmp_path, dtype) -> str:
    """A Connect-4 checkpoint whose first weight is NaN, its weights stored as `dtype`."""
    model = SENet(NetworkShape.for_game(make_game("connect4"), 1, 8, 2))
    with torch.no_grad():
        next(model.parameters())[0] = float("nan")
    _save_as(model, dtype, tmp_path / "nan.ckpt")
    return str(tmp_path / "nan.ckpt")


def _save_as(model, dtype, path) -> None:
    """A checkpoint of `model` with its float weights stored as `dtype` (torch.save, as a user's tool may)."""
    save_checkpoint(path, model, "connect4")
    payload = torch.load(path, weights_only=True)
    payload["state_dict"] = {k: v.to(dtype) if v.is_floating_point() else v for k, v in payload["state_dict"].items()}
    del payload["weights_sha256"]
    torch.save(payload, path)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_weights_that_are_not_finite_are_found_in_the_header_in_every_float_type(tmp_path, dtype):
    from pipeline.nets.header import check_header

    with pytest.raises(CheckpointError, match="weights stem.weight hold NaN or infinite values"):
        check_header(_nan(tmp_path, dtype))
    model = SENet(NetworkShape.for_game(make_game("connect4"), 1, 8, 2))
    _save_as(model, dtype, tmp_path / "fine.ckpt")
    assert check_header(tmp_path / "fine.ckpt") == model.shape
