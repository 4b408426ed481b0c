"""The game a checkpoint file names, read without torch: a command checks its arguments against the
game (seats, players the game brings) in a fraction of a second, before torch's import takes seconds.

torch.save writes a zip archive whose `data.pkl` pickles the checkpoint's dict; the tensors in it are
references to other members of the archive. The pickle is read here with an unpickler that imports
nothing: every class it names, torch's tensor builders included, becomes an inert placeholder, so a
file cannot run code by naming a module. Only the dict's `game` string is kept.
"""

from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

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


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        return _Inert

    def persistent_load(self, pid):
        return None


def stored_game(path: Path) -> str | None:
    """The game spec the checkpoint at `path` says it was trained for; None where the file is not one
    this reader can read (a missing or damaged file, a pickle too large), which `load_checkpoint` then
    refuses in its own line. Pass the spec through `trusted_game` before `make_game`."""
    try:
        with zipfile.ZipFile(path) as archive:
            member = next((i for i in archive.infolist() if i.filename.endswith("/data.pkl")), None)
            if member is None or member.file_size > MAX_HEADER_BYTES:
                return None
            payload = _Unpickler(archive.open(member)).load()
    except Exception:  # any damage at all: the full load's line says what is wrong
        return None
    game = payload.get("game") if isinstance(payload, dict) else None
    return game if isinstance(game, str) else None
