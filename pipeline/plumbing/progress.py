"""Progress where people look: a live bar at a terminal, and where the output goes to a file (the
README's `nohup nice dvc repro > run.log 2>&1 &`) a plain line every `LOG_SECONDS` with the count, the
rate and the time left, so that a log shows a long stage moving instead of nothing for minutes."""

from __future__ import annotations

import sys

from tqdm import tqdm

LOG_SECONDS = 10.0  # at most one progress line this often in a log file


def interactive() -> bool:
    """Whether the user watches a terminal (a live bar) rather than a log file (a line now and then)."""
    return sys.stderr.isatty()


def progress_bar(total: int | None = None, desc: str | None = None, disable: bool = False, **options) -> tqdm:
    """A tqdm bar on stderr; outside a terminal its refreshes become lines, one every `LOG_SECONDS` at
    most, and its last state stays as the final line."""
    if interactive():
        return tqdm(total=total, desc=desc, disable=disable, **options)
    options.pop("position", None)  # a line a bar: no nesting, whose cursor moves a log shows as `[A`
    options.update(leave=True, file=_Lines(sys.stderr), mininterval=LOG_SECONDS, ascii=True, ncols=100)
    return tqdm(total=total, desc=desc, disable=disable, **options)


def log_line(text: str) -> None:
    """One progress line for a log file (nothing at a terminal, where a live bar shows the same)."""
    if not interactive():
        print(text, file=sys.stderr, flush=True)


class _Lines:
    """A stream for tqdm that writes each refresh as a line of its own, not over the last one."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        for part in text.replace("\x1b[A", "").replace("\r", "\n").split("\n"):
            if part.strip():
                self.stream.write(part.strip() + "\n")

    def flush(self) -> None:
        self.stream.flush()
