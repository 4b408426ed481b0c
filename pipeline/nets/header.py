"""What a checkpoint file says it is, read and checked without torch: a command refuses a missing,
damaged, lying or misfit file in one line before torch's import takes seconds.

torch.save writes an uncompressed zip archive whose `data.pkl` pickles the checkpoint's dict; the
tensors in it are references to other members of the archive. The pickle is read here with an
unpickler that imports nothing: every class it names, torch's tensor builders included, becomes an
inert placeholder (an `OrderedDict` stays one), so a file cannot run code by naming a module. The same
checks of the dict (`check_payload`) run again on what torch's reader loads, for the files this reader
cannot read (torch's older formats), and `load_checkpoint` adds what needs the weights themselves.
"""

from __future__ import annotations

import collections
import dataclasses
import pickle
import zipfile
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from pipeline.config.schema import NetworkParams, describe_error
from pipeline.games.base import Game
from pipeline.games.contract import MAX_ACTIONS, MAX_OBSERVATION, MAX_PLAYERS
from pipeline.nets import CheckpointError
from pipeline.nets.shape import NetworkShape

FORMAT = 1
MAX_HEADER_BYTES = 64 * 2**20  # the pickle of a checkpoint's dict, tensors left out: KBs for the shipped ones


class _Inert:
    """What any class or function a checkpoint's pickle names is read as: it takes any arguments and
    state and keeps none."""

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass


@dataclasses.dataclass(frozen=True)
class _StorageType:
    """A torch storage class a pickle names (`torch.FloatStorage`): only its name is kept."""

    name: str


@dataclasses.dataclass(frozen=True)
class _Tensor:
    """A tensor as the pickle records it: the archive member holding its storage, and that storage's
    element type; enough to read its numbers without torch."""

    key: str
    storage: str


def _rebuild_tensor(storage, *args) -> _Tensor | _Inert:
    return storage if isinstance(storage, _Tensor) else _Inert()


class _Unpickler(pickle.Unpickler):
    """Records whether the pickle names anything but torch's own builders: such a file is left to
    torch's weights-only reader, whose refusal names what it would have run."""

    foreign = False

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if module == "torch" and name.endswith("Storage"):
            return _StorageType(name)
        self.foreign = self.foreign or module.split(".")[0] != "torch"
        return _Inert

    def persistent_load(self, pid):
        """torch.save's reference to a storage: ('storage', its class, archive key, device, elements)."""
        if isinstance(pid, tuple) and len(pid) == 5 and isinstance(pid[1], _StorageType) and isinstance(pid[2], str):
            return _Tensor(pid[2], pid[1].name)
        return None


# Storage classes whose numbers can be NaN, as numpy reads their bytes (bfloat16: the top half of a float32)
FLOAT_STORAGES = {"FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2", "BFloat16Storage": "<u2"}


def check_header(path: Path, game: Game | None = None, shape: NetworkShape | None = None) -> NetworkShape | None:
    """Refuse, in one line, a file that is missing, empty, a folder, a damaged or inflating archive, not
    this project's checkpoint, trained for another game than `game`, or of a recorded shape that is
    damaged, over the params' limits, unfit for `game` or other than `shape`. The recorded shape, or
    None where the file is no archive this reader reads (torch's reader then says what it is)."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"{path}: checkpoint not found")
    if path.is_dir():
        raise CheckpointError(f"{path}: is a folder; expected a checkpoint file")
    if path.stat().st_size == 0:
        raise CheckpointError(f"{path}: empty file, not a checkpoint")
    payload, foreign = _read_payload(path)
    if payload is None or foreign:
        return None
    stored = check_payload(path, payload, game, shape)
    _check_finite(path, payload["state_dict"])
    return stored


def stored_game(path: Path) -> str | None:
    """The game spec the checkpoint at `path` says it was trained for; None where the file is not one
    this reader can read (a missing or damaged file, a pickle too large), which `load_checkpoint` then
    refuses in its own line. Pass the spec through `trusted_game` before `make_game`."""
    try:
        payload, _ = _read_payload(Path(path))
    except (CheckpointError, OSError):
        return None
    game = payload.get("game") if isinstance(payload, dict) else None
    return game if isinstance(game, str) else None


def check_payload(path: Path, payload, game: Game | None = None, shape: NetworkShape | None = None) -> NetworkShape:
    """The checks of a checkpoint's dict, as read here or by torch; its recorded shape."""
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of this project (format {FORMAT} expected)")
    if not isinstance(payload.get("game"), str) or not isinstance(payload.get("state_dict"), dict):
        raise CheckpointError(f"{path}: damaged checkpoint (no game name or no weights)")
    if game is not None and payload["game"] != game.name:
        raise CheckpointError(f"{path}: trained for game {payload['game']!r}, but {game.name!r} was asked for")
    stored = _stored_shape(path, payload.get("shape"))
    if game is not None:
        check_fits(path, stored, game)
    if shape is not None and stored != shape:
        raise CheckpointError(f"{path}: network shape {stored} does not match the expected {shape}")
    return stored


def check_fits(path: Path, shape: NetworkShape, game: Game) -> None:
    """A network plays only a game whose seats, actions and planes it has: the recorded shape is data a
    file can get wrong, and a one-seat network on a two-seat game played on with one value for both."""
    expected = NetworkShape.for_game(game, shape.blocks, shape.channels, shape.se_reduction)
    misfits = [
        f"{name} {getattr(shape, name)} where {game.name} has {getattr(expected, name)}"
        for name in ("num_players", "num_actions", "in_channels", "rows", "cols")
        if getattr(shape, name) != getattr(expected, name)
    ]
    if misfits:
        raise CheckpointError(f"{path}: the network does not fit the game: {'; '.join(misfits)}")


def _check_finite(path: Path, weights: dict) -> None:
    """NaN or infinite weights (a training that diverged), read from the archive's storages with numpy."""
    tensors = {name: value for name, value in weights.items() if isinstance(value, _Tensor)}
    with zipfile.ZipFile(path) as archive:
        folder = next(i.filename for i in archive.infolist() if i.filename.endswith("/data.pkl"))[: -len("data.pkl")]
        names = set(archive.namelist())
        for name, tensor in tensors.items():
            dtype, member = FLOAT_STORAGES.get(tensor.storage), f"{folder}data/{tensor.key}"
            if dtype is None or member not in names:
                continue  # integers cannot be NaN; a missing storage is torch's reader's line
            try:
                data = archive.read(member)
            except zipfile.BadZipFile:  # bytes changed since written: the weights' digest says so
                continue
            if len(data) % np.dtype(dtype).itemsize:
                continue  # a cut storage: torch's reader's line
            numbers = np.frombuffer(data, dtype=dtype)
            if dtype == "<u2":
                numbers = (numbers.astype(np.uint32) << 16).view(np.float32)
            if not np.isfinite(numbers).all():
                raise CheckpointError(f"{path}: weights {name} hold NaN or infinite values (a training that diverged?)")


def _read_payload(path: Path) -> tuple[object, bool]:
    """The checkpoint's dict with inert tensors, after the archive's checks, and whether its pickle
    names more than torch's builders (torch's reader then says what it would have run); None where the
    file is no zip archive, has no `data.pkl` or its pickle is damaged (torch's reader says what it is)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, ValueError, OSError):
        return None, False
    with archive:
        members = archive.infolist()
        _check_archive(path, members)
        member = next((i for i in members if i.filename.endswith("/data.pkl")), None)
        if member is None:
            return None, False
        if member.file_size > MAX_HEADER_BYTES:
            raise CheckpointError(f"{path}: {member.filename} holds {member.file_size:,} bytes; "
                                  f"a checkpoint's is under {MAX_HEADER_BYTES:,}")  # fmt: skip
        unpickler = _Unpickler(archive.open(member))
        try:
            payload = unpickler.load()
        except Exception:  # any damage in the pickle: torch's reader says what it is
            return None, False
        return payload, unpickler.foreign


def _check_archive(path: Path, members: list[zipfile.ZipInfo]) -> None:
    """torch.save stores a checkpoint's members uncompressed, so what the reader inflates is bounded by
    the file's own size: a compressed member (a 5 MB file that inflated to 1 GB) or one whose header
    claims more bytes than it holds is refused before torch allocates for it."""
    for member in members:
        if member.compress_type != zipfile.ZIP_STORED:
            raise CheckpointError(f"{path}: {member.filename} is compressed; torch.save writes none; refused")
        if member.file_size != member.compress_size:
            raise CheckpointError(f"{path}: {member.filename} says {member.file_size:,} bytes and holds "
                                  f"{member.compress_size:,}: damaged checkpoint")  # fmt: skip
    if sum(member.file_size for member in members) > path.stat().st_size:
        raise CheckpointError(f"{path}: its members say more bytes than the file holds: damaged checkpoint")


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
    _check_sizes(path, shape)
    return NetworkShape(**shape)


def _check_sizes(path: Path, shape: dict) -> None:
    """A recorded shape within the limits params and games have, checked before a network of that shape
    is built: a 346 KB file saying 100,000 blocks of 4,096 channels asked for gigabytes."""
    try:
        NetworkParams(blocks=shape["blocks"], channels=shape["channels"], se_reduction=shape["se_reduction"])
    except ValidationError as err:
        raise CheckpointError(f"{path}: recorded shape: {describe_error(err.errors()[0])}") from None
    planes = shape["in_channels"] * shape["rows"] * shape["cols"]
    for name, size, most in (
        ("in_channels x rows x cols", planes, MAX_OBSERVATION),
        ("num_actions", shape["num_actions"], MAX_ACTIONS),
        ("num_players", shape["num_players"], MAX_PLAYERS),
    ):
        if size > most:
            raise CheckpointError(f"{path}: recorded shape: {name} {size:,} is over {most:,}; not a network of a game")
