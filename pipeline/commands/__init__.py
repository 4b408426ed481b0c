"""The command lines: `python -m pipeline <command> [args]`, one module here per command, each with a
`main(argv)` that parses its arguments, calls the library and prints. A game's package may bring
commands of its own (`connect4_benchmark`), registered in the entry-point group
`alphazero_pipeline.commands` as `name = "module.path:main"`. Nothing in the library imports this
package; the DVC stages share its `cli.py`."""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import io
import os
import signal
import sys
from importlib.metadata import entry_points
from pathlib import Path

from pipeline.config import load_params
from pipeline.harness.entry import entry_point

COMMANDS = {  # name: one line for `python -m pipeline --help`
    "analyse": "what a network thinks of positions read from standard input",
    "play": "play a network, UCT or random players in the terminal",
    "match": "head-to-head: a network against another network or a baseline",
    "solve": "exact solutions from the games that bring a solver (`solve --help` names them)",
    "bench": "throughput of the network, search, self-play and training",
    "sweep": "an Optuna study of the search params, and its report",
    "champions": "the shipped champions, one line each",
    "compare": "the pipeline runs of an MLflow experiment side by side: params that differ, curves",
    "export": "a checkpoint's network as an ONNX file, for onnxruntime or any ONNX runtime",
}


COMMAND_GROUP = "alphazero_pipeline.commands"


def brought_commands() -> dict[str, str]:
    """The commands installed packages bring (the project's games' included): name -> `module:main`;
    a library command's name is never taken."""
    return {p.name: p.value for p in entry_points(group=COMMAND_GROUP) if p.name not in COMMANDS}


def first_line(reference: str) -> str:
    """The first sentence of the docstring of the module `reference` names, read without importing it
    (a game's command imports torch)."""
    try:
        origin = importlib.util.find_spec(reference.partition(":")[0].strip()).origin
        doc = ast.get_docstring(ast.parse(Path(origin).read_text(encoding="utf-8"))) or ""
    except (AttributeError, TypeError, ImportError, OSError, SyntaxError, UnicodeDecodeError):
        return "(its module cannot be read)"
    return " ".join(doc.split("\n\n")[0].split()).split(": ")[0].rstrip(".")


def usage() -> str:
    brought = {name: first_line(reference) for name, reference in brought_commands().items()}
    listed = {**COMMANDS, **brought}
    width = max(map(len, listed))
    lines = ["usage: python -m pipeline <command> [args]   (python -m pipeline <command> --help: its own)", ""]
    return "\n".join(lines + ["commands:"] + [f"  {name:<{width}}  {line}" for name, line in listed.items()])


def main(argv: list[str] | None = None) -> None:
    """Run the command `argv[0]` with the rest of `argv`; `--help` lists the commands, an unknown one
    is one error line naming them (status 2, as for any bad usage)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(usage())
        return
    brought = brought_commands() if not argv or argv[0] not in COMMANDS else {}
    if not argv or argv[0] not in {**COMMANDS, **brought}:
        what = f"unknown command {argv[0]!r}" if argv else "no command given"
        print(f"error: {what}; expected one of: {', '.join([*COMMANDS, *brought])}", file=sys.stderr)
        sys.exit(2)
    check_params(argv[1:])
    module, _, function = brought.get(argv[0], f"{__name__}.{argv[0]}:main").partition(":")
    try:
        getattr(importlib.import_module(module.strip()), function.strip())(argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head -1` stopped reading: stop quietly, as `yes | head -1` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # Python's own flush at exit too
        sys.exit(128 + signal.SIGPIPE)


@entry_point
def check_params(argv: list[str]) -> None:
    """Read the `--params FILE` that `argv` gives before the command's module is imported: the modules
    import torch, MLflow or Optuna, seconds (a minute on a loaded machine) before a bad file is one
    line. The command reads the file again, and prints its deprecation notices then, once."""
    given = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    given.add_argument("--params")
    try:
        path = given.parse_known_args(argv)[0].params
    except argparse.ArgumentError:  # `--params` without a file: the command's own parser says so
        return
    if path is not None:
        with contextlib.redirect_stderr(io.StringIO()):
            load_params(path)
