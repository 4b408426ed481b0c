"""Checkpoints that say what they are: game, network shape and params hash travel with the weights,
and loading refuses a file that does not match what the caller expects."""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

import torch

from pipeline.atomic import atomic_path
from pipeline.nets.senet import NetworkShape, SENet

FORMAT = 1


class CheckpointError(ValueError):
    pass


def save_checkpoint(path: Path, model: SENet, game_name: str, params_hash: str = "") -> None:
    payload = {
        "format": FORMAT,
        "game": game_name,
        "shape": model.shape.to_dict(),
        "params_hash": params_hash,
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def checkpoint_game(path: Path) -> str:
    """The game spec a checkpoint was trained for (load it with `load_checkpoint` first for errors)."""
    return torch.load(path, map_location="cpu", weights_only=True)["game"]


def load_checkpoint(path: Path, game_name: str | None = None, shape: NetworkShape | None = None) -> SENet:
    """Load weights with `weights_only=True`; fail with one clear line on any mismatch."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: checkpoint not found")
    if path.stat().st_size == 0:  # torch raises an EOFError without a message
        raise CheckpointError(f"{path}: empty file, not a checkpoint")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (RuntimeError, pickle.UnpicklingError, zipfile.BadZipFile, EOFError, ValueError) as err:
        raise CheckpointError(f"{path}: not a readable checkpoint ({str(err).splitlines()[0]})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of this project (format {FORMAT} expected)")
    if game_name is not None and payload["game"] != game_name:
        raise CheckpointError(f"{path}: trained for game {payload['game']!r}, but {game_name!r} was asked for")
    stored = NetworkShape(**payload["shape"])
    if shape is not None and stored != shape:
        raise CheckpointError(f"{path}: network shape {stored} does not match the expected {shape}")
    model = SENet(stored)
    try:
        model.load_state_dict(payload["state_dict"])
    except RuntimeError as err:
        raise CheckpointError(f"{path}: weights do not fit the recorded shape ({str(err).splitlines()[0]})") from None
    model.eval()
    return model
