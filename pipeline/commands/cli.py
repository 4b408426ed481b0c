"""What the command lines share besides their entry point (`pipeline/harness/entry.py`): a parser
described by the command's docstring, and one-line refusals of numbers out of range."""

from __future__ import annotations

import argparse
import sys

from pipeline.harness.entry import UsageError


def command_parser(name: str, doc: str, **options) -> argparse.ArgumentParser:
    """The parser of `python -m pipeline <name>`, described by the first paragraph of the command's
    docstring: whole sentences, where its first line would stop mid-sentence."""
    description = " ".join(doc.split("\n\n")[0].split())
    return argparse.ArgumentParser(prog=f"python -m pipeline {name}", description=description, **options)


def out_of_range(minimum: int, maximum: int, options: dict[str, int | None]) -> str | None:
    """What is wrong with the first option (of those given: None is not) outside [minimum, maximum]:
    below it, or so far above anything a machine runs (a slip of the keyboard: 10^11 simulations) that
    it would end in a traceback or never; None where all are in range."""
    for option, value in options.items():
        if value is None or minimum <= value <= maximum:
            continue
        if value > maximum:
            return f"{option}: expected at most {maximum:,}, got {value:,}"
        expected = "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"
        return f"{option}: expected {expected}, got {value}"
    return None


def refuse_outside(minimum: int, maximum: int, options: dict[str, int | None]) -> None:
    """A usage error (one line, status 1) naming the first option outside [minimum, maximum]."""
    if message := out_of_range(minimum, maximum, options):
        raise UsageError(message)


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
