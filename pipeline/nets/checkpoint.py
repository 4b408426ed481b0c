"""Checkpoints that say what they are: game, network shape and params hash travel with the weights,
and loading refuses a file that does not match what the caller expects."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import pickle
import warnings
from pathlib import Path

import torch

from pipeline.atomic import write_bytes
from pipeline.nets import CheckpointError
from pipeline.nets.senet import NetworkShape, SENet

FORMAT = 1


def save_checkpoint(path: Path, model: SENet, game_name: str, params_hash: str = "") -> None:
    """Serialised in memory, then written atomically: torch.save to a file names the zip archive's
    folder after the file, so saving to a temporary name would make equal weights differ in bytes."""
    weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    payload = {
        "format": FORMAT,
        "game": game_name,
        "shape": model.shape.to_dict(),
        "params_hash": params_hash,
        "state_dict": weights,
        "weights_sha256": weights_digest(weights),  # torch's reader loads damaged tensor bytes silently
    }
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    write_bytes(path, buffer.getvalue())


def weights_digest(state_dict: dict) -> str:
    """A hash of the weights' content: equal networks are one player, one benchmark entry."""
    digest = hashlib.sha256()
    for key, tensor in sorted(state_dict.items()):
        digest.update(key.encode())
        digest.update(tensor.detach().cpu().numpy().tobytes())
    return digest.hexdigest()


def checkpoint_game(path: Path) -> str:
    """The game spec a checkpoint was trained for (load it with `load_checkpoint` first for errors)."""
    return torch.load(path, map_location="cpu", weights_only=True)["game"]


def load_checkpoint(path: Path, game_name: str | None = None, shape: NetworkShape | None = None) -> SENet:
    """Load weights with `weights_only=True`; fail with one clear line on any mismatch."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: checkpoint not found")
    if path.is_dir():
        raise CheckpointError(f"{path}: is a folder; expected a checkpoint file")
    if path.stat().st_size == 0:  # torch raises an EOFError without a message
        raise CheckpointError(f"{path}: empty file, not a checkpoint")
    try:
        with warnings.catch_warnings():  # torch warns of a raw pickle's protocol before refusing it
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:  # torch's advice here is to load the file unsafely: not passed on
        raise CheckpointError(f"{path}: not a readable checkpoint (weights-only reader: {_refusal(err)})") from None
    except Exception as err:  # a damaged file fails anywhere in torch's reader (OSError, RuntimeError, ...)
        raise CheckpointError(f"{path}: not a readable checkpoint ({_first_line(err)})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of this project (format {FORMAT} expected)")
    if not isinstance(payload.get("game"), str) or not isinstance(payload.get("state_dict"), dict):
        raise CheckpointError(f"{path}: damaged checkpoint (no game name or no weights)")
    if game_name is not None and payload["game"] != game_name:
        raise CheckpointError(f"{path}: trained for game {payload['game']!r}, but {game_name!r} was asked for")
    stored = _stored_shape(path, payload.get("shape"))
    if shape is not None and stored != shape:
        raise CheckpointError(f"{path}: network shape {stored} does not match the expected {shape}")
    checksum = payload.get("weights_sha256")  # absent from users' checkpoints saved before it was; shipped ones have it
    if checksum is not None and checksum != weights_digest(payload["state_dict"]):
        raise CheckpointError(f"{path}: damaged checkpoint (its weights do not match their checksum)")
    model = SENet(stored)
    try:
        model.load_state_dict(payload["state_dict"])
    except RuntimeError as err:
        raise CheckpointError(f"{path}: weights do not fit the recorded shape ({_first_line(err)})") from None
    model.eval()
    return model


_TORCH_ADVICE = (  # the lines around the reason in torch's message
    "Weights only load failed",
    "Please file an issue",
    "WeightsUnpickler error",
    "Check the documentation",
)


def _refusal(err: Exception) -> str:
    """What torch's weights-only reader found (an unknown opcode, a blocked global such as posix.system),
    without the advice around it to load the file with `weights_only=False`: the unsafe option for a
    file that may run code."""
    lines = (line.strip() for line in str(err).splitlines())
    return next((line for line in lines if line and not line.startswith(_TORCH_ADVICE)), "not weights only")


def _stored_shape(path: Path, shape) -> NetworkShape:
    """The recorded shape; one saved before networks read constant planes as a vector has none (0), one
    saved before score heads has none (false)."""
    names = [field.name for field in dataclasses.fields(NetworkShape)]
    sizes = [name for name in names if name not in ("constant_planes", "score_head")]
    if isinstance(shape, dict):
        shape = {"constant_planes": 0, "score_head": False, **shape}
    if not (
        isinstance(shape, dict)
        and sorted(shape) == sorted(names)
        and all(type(shape[name]) is int and shape[name] >= 1 for name in sizes)
        and type(shape["constant_planes"]) is int
        and 0 <= shape["constant_planes"] < shape["in_channels"]
        and type(shape["score_head"]) is bool
    ):
        raise CheckpointError(
            f"{path}: damaged checkpoint (shape must give positive integers {', '.join(sizes)},"
            " constant_planes from 0 to fewer than in_channels and score_head true or false)"
        )
    return NetworkShape(**shape)


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
