"""Issue 74: a weights digest that cannot be stripped. Every checkpoint the project writes carries one;
a file without one loads with one warning line; a shipped champion is checked against the digest on
its card, outside the file, so renaming the key and changing a weight is refused in one line."""

import logging
import shutil
from pathlib import Path

import pytest
import torch
import yaml

from pipeline import champions
from pipeline.commands import match
from pipeline.games import make_game
from pipeline.nets import CheckpointError
from pipeline.nets import checkpoint as checkpoint_module
from pipeline.nets.checkpoint import DIGEST_KEY, load_checkpoint, save_checkpoint, shipped_digest, weights_digest
from pipeline.nets.senet import NetworkShape, SENet

LOGGER = "pipeline.nets.checkpoint"


def small_net(game) -> SENet:
    torch.manual_seed(0)
    return SENet(NetworkShape.for_game(game, blocks=1, channels=8, se_reduction=2))


def stripped_and_altered(source: Path, target: Path) -> None:
    """The attack: the digest key renamed by one byte and one weight changed, saved as torch saves."""
    payload = torch.load(source, map_location="cpu", weights_only=True)
    payload[DIGEST_KEY[:-1] + "x"] = payload.pop(DIGEST_KEY)
    name = max(payload["state_dict"], key=lambda key: payload["state_dict"][key].numel())
    payload["state_dict"][name].view(-1)[0] += 1.0
    torch.save(payload, target)


@pytest.fixture
def shipped(tmp_path, monkeypatch) -> Path:
    """A champions folder of one copy of the shipped Tic-Tac-Mo (checkpoint and card), in place of the
    package's: what loads from it is a shipped champion."""
    folder = tmp_path / "champions"
    folder.mkdir()
    for suffix in (".ckpt", ".yaml"):
        shutil.copy(champions.FOLDER / f"tictacmo{suffix}", folder / f"tictacmo{suffix}")
    monkeypatch.setattr(champions, "FOLDER", folder)
    monkeypatch.setattr(checkpoint_module, "SHIPPED_FOLDER", folder.resolve())
    return folder


def test_every_checkpoint_the_project_writes_carries_its_digest(tmp_path):
    game = make_game("tictacmo")
    model = small_net(game)
    save_checkpoint(tmp_path / "net.ckpt", model, game.name)
    payload = torch.load(tmp_path / "net.ckpt", weights_only=True)
    assert payload[DIGEST_KEY] == weights_digest(model.state_dict()) == weights_digest(payload["state_dict"])


def test_a_checkpoint_without_a_digest_loads_and_says_so_in_one_warning_line(tmp_path, caplog):
    game = make_game("tictacmo")
    save_checkpoint(tmp_path / "net.ckpt", small_net(game), game.name)
    payload = torch.load(tmp_path / "net.ckpt", weights_only=True)
    del payload[DIGEST_KEY]  # as saved before checkpoints carried one
    torch.save(payload, tmp_path / "old.ckpt")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        load_checkpoint(tmp_path / "net.ckpt", game)
        assert caplog.records == []  # a digest: nothing to say
        load_checkpoint(tmp_path / "old.ckpt", game)
        load_checkpoint(tmp_path / "old.ckpt", game)  # a command may load it twice: said once
    [record] = caplog.records
    assert record.levelno == logging.WARNING and record.name == LOGGER
    message = record.getMessage()
    assert message.startswith(f"{tmp_path / 'old.ckpt'}: no {DIGEST_KEY}") and "\n" not in message


def test_a_copy_outside_the_champions_folder_is_only_checked_against_its_own_digest(tmp_path, caplog):
    """Outside the package a stripped and altered copy is a user's checkpoint without a digest: it loads,
    with the warning; what the issue forbids is that the shipped champion itself could be one."""
    stripped_and_altered(champions.checkpoint_path("tictacmo"), tmp_path / "tictacmo.ckpt")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        load_checkpoint(tmp_path / "tictacmo.ckpt")
    assert [record.levelno for record in caplog.records] == [logging.WARNING]


@pytest.mark.parametrize("name", champions.names())
def test_each_shipped_card_carries_the_digest_of_its_checkpoints_weights(name):
    payload = torch.load(champions.checkpoint_path(name), map_location="cpu", weights_only=True)
    assert champions.card(name)[DIGEST_KEY] == weights_digest(payload["state_dict"])
    assert shipped_digest(champions.card_path(name)) == champions.card(name)[DIGEST_KEY]


def test_the_shipped_champions_load_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for name in champions.names():
            load_checkpoint(champions.checkpoint_path(name), make_game(champions.card(name)["game"]))
    assert caplog.records == []


def test_a_shipped_champion_with_its_key_stripped_and_a_weight_changed_is_refused(shipped):
    path = shipped / "tictacmo.ckpt"
    stripped_and_altered(path, path)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path)
    assert str(info.value) == (
        f"{path}: weights differ from the {DIGEST_KEY} on the shipped card {(shipped / 'tictacmo.yaml').resolve()};"
        " refused"
    )


def test_a_stripped_shipped_champion_is_refused_in_one_line_by_the_commands(shipped, tmp_path, monkeypatch, capsys):
    """Whatever path a command takes, `champions.resolve` gives the path and `load_checkpoint` checks it."""
    stripped_and_altered(shipped / "tictacmo.ckpt", shipped / "tictacmo.ckpt")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        match.main(["tictacmo", "random", "--games-per-seating", "1", "--simulations", "2"])
    out, err = capsys.readouterr()
    assert exit.value.code == 1 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "on the shipped card" in err


def test_an_unchanged_shipped_champion_with_its_key_stripped_loads_on_its_cards_digest(shipped, caplog):
    path = shipped / "tictacmo.ckpt"
    payload = torch.load(path, map_location="cpu", weights_only=True)
    del payload[DIGEST_KEY]
    torch.save(payload, path)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        load_checkpoint(path, make_game("tictacmo"))
    assert caplog.records == []  # the card's digest checked it


@pytest.mark.parametrize("value", [None, "", "f" * 63, "F" * 64, 12345, ["a"]], ids=str)
def test_a_shipped_champion_whose_card_lacks_a_digest_is_refused(shipped, value):
    card = shipped / "tictacmo.yaml"
    data = yaml.safe_load(card.read_text())
    if value is None:
        del data[DIGEST_KEY]
    else:
        data[DIGEST_KEY] = value
    card.write_text(yaml.safe_dump(data))
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(shipped / "tictacmo.ckpt")
    assert str(info.value) == (
        f"{shipped / 'tictacmo.ckpt'}: shipped champion with no {DIGEST_KEY} on its card {card.resolve()}; refused"
    )


def test_a_shipped_champion_without_a_card_is_refused(shipped):
    (shipped / "tictacmo.yaml").unlink()
    with pytest.raises(CheckpointError, match=f"shipped champion with no {DIGEST_KEY} on its card"):
        load_checkpoint(shipped / "tictacmo.ckpt")
