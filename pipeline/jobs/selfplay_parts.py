"""Finished parts of a self-play stage on disk, so a stopped stage resumes where it stopped instead of
at its first game: a generation of a 5 x 128 network's self-play takes 40 minutes on a shared 2-core
machine, and without parts every stop lost all of it.

A part is a fixed block of the stage's games with a seed of its own, saved the moment it completes as
its samples and figures. Its file name hashes everything that decides its games (the params the stage
reads, the network's weights, the generation, the part's number and size, the worker count, the
project's own code and the versions of torch and numpy), so a change in any of them plays the part
again: old and new samples never mix.
A part that does not read back whole is reported in one line and played again, never trusted. The
stage deletes the folder once its samples are written.
"""

from __future__ import annotations

import json
import logging
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from pipeline.jobs.replay import FIELDS, load_samples
from pipeline.jobs.work_key import work_key
from pipeline.plumbing.atomic import write_npz

log = logging.getLogger(__name__)

FORMAT = 2  # part of every name: a change in what a part holds retires all older parts (2: scores)


@dataclass
class Part:
    samples: dict[str, np.ndarray]
    games: int
    moves: int
    simulations: int
    seconds: float  # the wall time this part added to the stage, worker start-up included
    playing_seconds: float  # the wall time its games added, start-up excluded: the steady-state rate

    def figures(self) -> dict:
        return {name: value for name, value in asdict(self).items() if name != "samples"}


class PartStore:
    """The parts of one stage run in `folder`; `identity` (plain JSON values) names what decides its
    games besides a part's number and size."""

    def __init__(self, folder: Path | str, identity: dict):
        self.folder = Path(folder)
        self.identity = {"format": FORMAT, **identity}

    def path(self, number: int, games: int) -> Path:
        return self.folder / f"part_{number}.{work_key({**self.identity, 'part': number, 'games': games})}.npz"

    def get(self, number: int, games: int) -> Part | None:
        """Part `number` of `games` games, or None to play it."""
        path = self.path(number, games)
        if not path.exists():
            return None
        try:
            samples = load_samples(path)
            with np.load(path) as data:
                figures = json.loads(str(data["figures"]))
            part = Part(samples, **figures)
            if part.games != games:
                raise ValueError(f"it holds {part.games} games, not {games}")
        except (ValueError, TypeError, KeyError, OSError, zipfile.BadZipFile) as err:
            log.warning("self-play: ignoring corrupt part %s (%s); it will be played again", path, err)
            return None
        return part

    def put(self, number: int, part: Part) -> None:
        arrays = {name: part.samples[name] for name in FIELDS}
        write_npz(self.path(number, part.games), **arrays, figures=np.array(json.dumps(part.figures())))
