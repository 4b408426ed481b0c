"""Issue 74: no code runs because a file says so. A checkpoint's game spec is data: one that names a
module to import (`module:Class`) is refused in one line unless the user passes the same spec with
`--game`; built-in games, `openspiel:` games and installed entry points are read from the file."""

import io
import sys

import pytest
import torch

from pipeline.commands import analyse, match
from pipeline.commands.networks import trusted_game
from pipeline.games import make_game
from pipeline.nets import CheckpointError
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import NetworkShape, SENet

ZEN = "Beautiful is better than ugly"


@pytest.mark.parametrize(
    "spec",
    ["tictacmo", "pig(players=3)", "kingdomino(players=4,fit=1)", "openspiel:backgammon", "mygame(size=4)", "chess"],
)
def test_a_spec_that_imports_no_module_of_the_files_choosing_is_trusted(spec):
    """An entry point's name (`mygame`) imports an installed package; an unknown name is make_game's error."""
    assert trusted_game(spec) == spec


@pytest.mark.parametrize("spec", ["this:Zen", "os:system", "nim:Nim(rows=3)", " openspiel:x"])
def test_a_module_class_spec_from_a_file_is_refused_unless_the_user_gave_it(spec):
    with pytest.raises(CheckpointError) as info:
        trusted_game(spec, None, "net.ckpt")
    assert str(info.value) == (
        f"net.ckpt: the checkpoint's game {spec!r} names a module to import; pass --game {spec!r} to trust it"
    )
    with pytest.raises(CheckpointError):
        trusted_game(spec, "tictacmo")  # another spec vouches for nothing
    assert trusted_game(spec, spec) == spec


@pytest.fixture
def zen_checkpoint(tmp_path, monkeypatch):
    """A checkpoint whose game is `this:Zen`; `this` not yet imported, so importing it would print."""
    game = make_game("tictacmo")
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "zen.ckpt", SENet(NetworkShape.for_game(game, 1, 8, 2)), "this:Zen")
    monkeypatch.delitem(sys.modules, "this", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "zen.ckpt"


def test_match_refuses_a_checkpoint_whose_game_is_a_module_in_one_line_and_runs_none_of_it(zen_checkpoint, capsys):
    with pytest.raises(SystemExit) as exit:
        match.main([str(zen_checkpoint), "random", "--games-per-seating", "1"])
    out, err = capsys.readouterr()
    assert exit.value.code == 1 and out == "" and ZEN not in err
    assert err.splitlines() == [
        f"error: {zen_checkpoint}: the checkpoint's game 'this:Zen' names a module to import;"
        " pass --game 'this:Zen' to trust it"
    ]
    assert "this" not in sys.modules


def test_analyse_refuses_a_checkpoint_whose_game_is_a_module_in_one_line(zen_checkpoint, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(SystemExit) as exit:
        analyse.main([str(zen_checkpoint)])
    out, err = capsys.readouterr()
    assert exit.value.code != 0 and out == "" and ZEN not in err
    assert len(err.strip().splitlines()) == 1 and "pass --game 'this:Zen' to trust it" in err
    assert "this" not in sys.modules


@pytest.mark.parametrize("command", ["export", "sweep"])
def test_export_and_the_play_sweep_refuse_it_too(zen_checkpoint, capsys, command):
    from pipeline.commands import export, sweep

    argv = [str(zen_checkpoint), "zen.onnx"] if command == "export" else ["--play", str(zen_checkpoint)]
    with pytest.raises(SystemExit) as exit:
        (export if command == "export" else sweep).main(argv)
    out, err = capsys.readouterr()
    assert exit.value.code == 1 and ZEN not in out + err and "pass --game 'this:Zen' to trust it" in err
    assert "this" not in sys.modules and not (zen_checkpoint.parent / "zen.onnx").exists()


def test_match_uses_the_users_game_spec_when_given_with_game(zen_checkpoint, capsys):
    """The user vouched for the module: it is imported (and prints), then fails as not a game, one line."""
    with pytest.raises(SystemExit) as exit:
        match.main([str(zen_checkpoint), "random", "--game", "this:Zen", "--games-per-seating", "1"])
    out, err = capsys.readouterr()
    assert exit.value.code == 1 and ZEN in out
    assert err.splitlines() == ["error: game 'this:Zen': module this has no class Zen"]
