"""The command lines: `python -m pipeline <command> [args]`, one module here per command, each with a
`main(argv)` that parses its arguments, calls the library and prints. Nothing in the library imports
this package; the DVC stages share its `cli.py`."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import signal
import sys

from pipeline.config import load_params
from pipeline.harness.entry import entry_point

COMMANDS = {  # name: one line for `python -m pipeline --help`
    "analyse": "what a network thinks of positions read from standard input",
    "play": "play a network, UCT or random players in the terminal",
    "match": "head-to-head: a network against another network or a baseline",
    "solve": "exact solutions: Pig by value iteration, Connect-4 and Tic-Tac-Mo positions",
    "bench": "throughput of the network, search, self-play and training",
    "connect4_benchmark": "Connect-4 mistakes of one network on Pons' test positions",
    "benchmark_curve": "Connect-4 mistakes of every generation of a run, against the compute spent",
    "sweep": "an Optuna study of the search params, and its report",
    "champions": "the shipped champions, one line each",
    "compare": "the pipeline runs of an MLflow experiment side by side: params that differ, curves",
    "export": "a checkpoint's network as an ONNX file, for onnxruntime or any ONNX runtime",
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: python -m pipeline <command> [args]   (python -m pipeline <command> --help: its own)", ""]
    return "\n".join(lines + ["commands:"] + [f"  {name:<{width}}  {line}" for name, line in COMMANDS.items()])


def main(argv: list[str] | None = None) -> None:
    """Run the command `argv[0]` with the rest of `argv`; `--help` lists the commands, an unknown one
    is one error line naming them (status 2, as for any bad usage)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(usage())
        return
    if not argv or argv[0] not in COMMANDS:
        what = f"unknown command {argv[0]!r}" if argv else "no command given"
        print(f"error: {what}; expected one of: {', '.join(COMMANDS)}", file=sys.stderr)
        sys.exit(2)
    check_params(argv[1:])
    try:
        importlib.import_module(f"{__name__}.{argv[0]}").main(argv[1:])
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
