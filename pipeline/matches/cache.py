"""Finished matches on disk, one JSON file each, so an interrupted evaluation resumes without replaying
them and a new generation plays only the matches it adds.

A match's key hashes everything that decides its games (the agents' identities and play settings,
the game spec, seatings, seed, ...), so a changed ingredient is a new match and never a stale hit.
Entries are written to a temporary name and renamed; one that does not read back as whole, valid
games (a truncated file, edited by hand, copied under another key, games that no longer match their
digest) is reported in one line and the match is played again, never trusted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from pathlib import Path

from pipeline.plumbing.atomic import atomic_path

log = logging.getLogger(__name__)

FORMAT = 1  # part of every key: a change in what an entry holds retires all older entries
DIGEST = "games_sha256"  # in an entry: its games' digest


class MatchCache:
    def __init__(self, folder: Path | str):
        self.folder = Path(folder)

    @staticmethod
    def key(**parts) -> str:
        """A stable hash of the named parts (JSON values: the order of dict entries does not count)."""
        try:
            text = json.dumps({"format": FORMAT, "parts": parts}, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise TypeError(f"match cache: key parts must be plain JSON values: {err}") from None
        return hashlib.sha256(text.encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> list[dict] | None:
        """The match's games (each with `seating` and `scores`), or None to play it."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            entry = json.loads(path.read_text())
            if not isinstance(entry, dict) or entry.get("key") != key:
                raise ValueError(f"it is not the entry for key {key[:12]}")
            _check_games(entry.get("games"))
            if DIGEST in entry and entry[DIGEST] != games_digest(entry["games"]):  # entries before it have none
                raise ValueError("its games do not match their digest (edited by hand?)")
        except (ValueError, UnicodeDecodeError) as err:
            log.warning("match cache: ignoring corrupt entry %s (%s); the match will be played again", path, err)
            return None
        return entry["games"]

    def put(self, key: str, games: list[dict], metadata: dict | None = None) -> None:
        """Save a finished match: its games (`seating`: agent name per seat, `scores`: one per seat, any
        other JSON fields kept as given) and free-form `metadata` for people reading the folder."""
        try:
            _check_games(games)
        except ValueError as err:
            raise ValueError(f"match cache: refusing to save match {key[:12]}: {err}") from None
        written = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        entry = {"key": key, "written": written, "metadata": metadata or {}, "games": games}
        entry[DIGEST] = games_digest(games)
        text = json.dumps(entry, sort_keys=True, allow_nan=False)
        with atomic_path(self.path(key)) as tmp:
            tmp.write_text(text + "\n")


def games_digest(games: list[dict]) -> str:
    """A hash of the games as JSON writes them: one game taken out of forty, or a score changed, no
    longer matches (a digest in the file finds edits, not tampering, as a checkpoint's does)."""
    return hashlib.sha256(json.dumps(games, sort_keys=True, allow_nan=False).encode()).hexdigest()


def _check_games(games) -> None:
    if not isinstance(games, list):
        raise ValueError("no list of games")
    for number, game in enumerate(games):
        seating = game.get("seating") if isinstance(game, dict) else None
        scores = game.get("scores") if isinstance(game, dict) else None
        if not (isinstance(seating, list) and seating and all(isinstance(name, str) for name in seating)):
            raise ValueError(f"game {number} has no seating of agent names")
        if not (isinstance(scores, list) and len(scores) == len(seating) and all(map(_is_score, scores))):
            raise ValueError(f"game {number} has no finite score per seat")


def _is_score(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
