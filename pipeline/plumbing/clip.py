"""Error lines quote what the user gave, cut to a readable length, so a 1 MB input line does not come
back whole on standard error."""

from __future__ import annotations


def clip(text: str, limit: int = 200) -> str:
    """`text` on one line, at most `limit` characters, ending in '...' where it was cut."""
    text = " ".join(text.splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def quoted(text: str, limit: int = 60) -> str:
    """A value the user gave (a game spec of 5,000 characters), quoted as error lines quote it: cut."""
    return clip(repr(text), limit)
