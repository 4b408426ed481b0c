"""What the command lines share besides their entry point (`pipeline/jobs/entry.py`): a parser
described by the command's docstring, and one-line refusals of numbers out of range."""

from __future__ import annotations

import argparse
import sys

from pipeline.jobs.entry import UsageError


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


def add_simulations(parser: argparse.ArgumentParser, old: str, **options) -> None:
    """`--simulations`, the one name of a search budget; `old` (`--sims`, `--rollouts`) is still read,
    with a one-line deprecation notice."""
    parser.add_argument("--simulations", dest="simulations", type=int, **options)
    parser.add_argument(old, dest="simulations", type=int, action=_Deprecated, help=argparse.SUPPRESS,
                        nargs=options.get("nargs"))  # fmt: skip


class _Deprecated(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: {option_string} is deprecated; use --simulations", file=sys.stderr)
        setattr(namespace, self.dest, values)
