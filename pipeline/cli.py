"""What every command-line entry point shares: one-line errors for bad input, and torch threads set
from params so workers never oversubscribe the cores."""

from __future__ import annotations

import logging
import os
import sys
from functools import wraps

from pipeline.config import ConfigError, Params
from pipeline.credentials import mask_passwords
from pipeline.games import IllegalMove
from pipeline.nets.checkpoint import CheckpointError
from pipeline.replay import DataError

USER_ERRORS = (ConfigError, CheckpointError, DataError, IllegalMove)


def entry_point(main):
    """Run `main(argv)`; a user error prints one line naming what is wrong and exits with status 1."""

    @wraps(main)
    def wrapper(argv: list[str] | None = None) -> None:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        for noisy in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "alembic"):
            logging.getLogger(noisy).setLevel(logging.ERROR)
        try:
            main(sys.argv[1:] if argv is None else argv)
        except USER_ERRORS as err:
            print(f"error: {mask_passwords(str(err))}", file=sys.stderr)
            sys.exit(1)

    return wrapper


def set_threads(params: Params) -> None:
    import torch

    torch.set_num_threads(params.threads or os.cpu_count() or 1)
