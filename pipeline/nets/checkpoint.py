"""Checkpoints that say what they are: game, network shape and params hash travel with the weights,
and loading refuses a file that does not match what the caller expects.

The weights' digest (`weights_sha256`) travels in the file, where whoever edits the weights can strip or
rewrite it: it finds damage, not tampering. A shipped champion's digest is also on its card, outside the
file, and loading the champion refuses weights that do not match it. A file's game spec is data too: a
`module:Class` one is imported only when the user names it (`commands/networks.py`'s `trusted_game`).
"""

from __future__ import annotations

import hashlib
import io
import logging
import pickle
import warnings
from pathlib import Path

import numpy as np
import torch
import yaml

from pipeline.games.base import Game
from pipeline.nets import CheckpointError
from pipeline.nets.header import FORMAT, check_header, check_payload
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.plumbing.atomic import write_bytes

DIGEST_KEY = "weights_sha256"
# pipeline/champions, named by path: that package imports this floor's CheckpointError, so not imported here
SHIPPED_FOLDER = Path(__file__).resolve().parents[1] / "champions"
log = logging.getLogger(__name__)
_WARNED: set[tuple[str, int]] = set()  # files already said to carry no digest: one line a file, not a load


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
        DIGEST_KEY: weights_digest(weights),  # torch's reader loads damaged tensor bytes silently
    }
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    write_bytes(path, buffer.getvalue())


def weights_digest(state_dict: dict) -> str:
    """A hash of the weights' content: equal networks are one player, one benchmark entry. The values are
    tensors or, as an `AgentSpec` carries them, numpy arrays: the same weights give the same digest."""
    digest = hashlib.sha256()
    for key, values in sorted(state_dict.items()):
        digest.update(key.encode())
        array = values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else np.asarray(values)
        digest.update(array.tobytes())
    return digest.hexdigest()


def checkpoint_game(path: Path) -> str:
    """The game spec a checkpoint was trained for (load it with `load_checkpoint` first for errors);
    pass it through `trusted_game` before `make_game`: it is what the file says."""
    return torch.load(path, map_location="cpu", weights_only=True)["game"]


def load_checkpoint(path: Path, game: Game | None = None, shape: NetworkShape | None = None) -> SENet:
    """Load weights with `weights_only=True`; fail with one clear line on any mismatch, a network that
    does not fit `game` included."""
    path = Path(path)
    checked = check_header(path, game, shape)  # what the file says, its weights' numbers too, before torch
    try:
        with warnings.catch_warnings():  # torch warns of a raw pickle's protocol before refusing it
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:  # torch's advice here is to load the file unsafely: not passed on
        raise CheckpointError(f"{path}: not a readable checkpoint (weights-only reader: {_refusal(err)})") from None
    except Exception as err:  # a damaged file fails anywhere in torch's reader (OSError, RuntimeError, ...)
        raise CheckpointError(f"{path}: not a readable checkpoint ({_first_line(err)})") from None
    stored = check_payload(path, payload, game, shape)  # again: torch's older formats, which only it reads
    _check_digest(path, payload)
    weights = payload["state_dict"].items() if checked is None else ()  # a file only torch's reader reads
    if bad := next((k for k, v in weights if torch.is_tensor(v) and not v.isfinite().all()), None):
        raise CheckpointError(f"{path}: weights {bad} hold NaN or infinite values (a training that diverged?)")
    model = SENet(stored)
    try:
        model.load_state_dict(payload["state_dict"])
    except RuntimeError as err:
        raise CheckpointError(f"{path}: weights do not fit the recorded shape ({_first_line(err)})") from None
    model.eval()
    return model


def _check_digest(path: Path, payload: dict) -> None:
    """The file's digest finds damage; a shipped champion's card digest, which editing the file cannot
    reach, finds any change; a file without one loads (users' checkpoints from before it) and says so."""
    digest = weights_digest(payload["state_dict"])
    checksum = payload.get(DIGEST_KEY)
    if checksum is not None and checksum != digest:
        raise CheckpointError(f"{path}: damaged checkpoint (its weights do not match their checksum)")
    if path.resolve().parent == SHIPPED_FOLDER:
        card = path.resolve().with_suffix(".yaml")
        expected = shipped_digest(card)
        if expected is None:
            raise CheckpointError(f"{path}: shipped champion with no {DIGEST_KEY} on its card {card}; refused")
        if expected != digest:
            raise CheckpointError(f"{path}: weights differ from the {DIGEST_KEY} on the shipped card {card}; refused")
    elif checksum is None and (key := (str(path.resolve()), path.stat().st_mtime_ns)) not in _WARNED:
        _WARNED.add(key)
        log.warning("%s: no %s in the checkpoint: its weights cannot be checked for damage", path, DIGEST_KEY)


def shipped_digest(card: Path) -> str | None:
    """The `weights_sha256` on a shipped champion's card: a 64-digit hex string, else None (refused)."""
    try:
        data = yaml.safe_load(Path(card).read_text())
    except (OSError, yaml.YAMLError):
        return None
    digest = data.get(DIGEST_KEY) if isinstance(data, dict) else None
    valid = isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
    return digest if valid else None


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


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
