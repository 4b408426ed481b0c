"""Issue 82: a checkpoint whose recorded shape lies is refused in one line before a network of that shape
is built: the same limits as params (blocks, channels) and games (actions, observation, seats)."""

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
