"""What every command-line entry point shares: one-line errors for bad input, and torch threads set
from params so workers never oversubscribe the cores."""

from __future__ import annotations

import argparse
import logging
import sys
from functools import wraps

from pipeline.atomic import WriteError
from pipeline.clip import clip
from pipeline.config import ConfigError, Params
from pipeline.credentials import mask_passwords
from pipeline.games import IllegalMove
from pipeline.jobs.replay import DataError
from pipeline.jobs.tracking import TrackingError
from pipeline.matches import BackendError
from pipeline.nets import CheckpointError
from pipeline.nets.evaluator import use_device
from pipeline.stores import StoreError
from pipeline.threads import use_threads


class UsageError(ValueError):
    """A command-line value that parses but cannot be used (a budget of 0, an unknown player)."""


USER_ERRORS = (
    BackendError,
    ConfigError,
    CheckpointError,
    DataError,
    IllegalMove,
    StoreError,
    TrackingError,
    UsageError,
    WriteError,
)


def entry_point(main):
    """Run `main(argv)`; a user error prints one line naming what is wrong and exits with status 1,
    Ctrl-C one line and status 130 (the shell's convention), never a traceback."""

    @wraps(main)
    def wrapper(argv: list[str] | None = None) -> None:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        for noisy in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "alembic"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        use_threads(0)  # follow the free cores unless the command or its params say otherwise
        try:
            main(sys.argv[1:] if argv is None else argv)
        except USER_ERRORS as err:
            print(f"error: {clip(mask_passwords(str(err)), 300)}", file=sys.stderr)
            sys.exit(1)
        except KeyboardInterrupt:
            print("\ninterrupted", file=sys.stderr)
            sys.exit(130)

    return wrapper


def command_parser(name: str, doc: str, **options) -> argparse.ArgumentParser:
    """The parser of `python -m pipeline <name>`, described by the first paragraph of the command's
    docstring: whole sentences, where its first line would stop mid-sentence."""
    description = " ".join(doc.split("\n\n")[0].split())
    return argparse.ArgumentParser(prog=f"python -m pipeline {name}", description=description, **options)


def refuse_below(minimum: int, options: dict[str, int | None]) -> None:
    """A usage error naming the first option (of those given: None is not) below `minimum`."""
    for option, value in options.items():
        if value is not None and value < minimum:
            expected = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
            raise UsageError(f"{option}: expected {expected}, got {value}")


def use_params_machine(params: Params) -> None:
    """The torch threads and the device (CPU or GPU) the params ask for, in this process."""
    use_threads(params.threads)
    use_device(params.device)
