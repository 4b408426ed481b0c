"""`python -m pipeline <command>`: the help lists every command module with one line, an unknown
command is one error line naming them, and a command runs with its own arguments."""

import ast
import os
import subprocess
import sys
from pathlib import Path

from pipeline.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


def pipeline_command(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pipeline", *argv], capture_output=True, text=True, env=env)


def test_every_command_module_is_listed():
    """A command is a module of pipeline/commands with a `main`; the others (cli.py, networks.py) help them."""
    modules = {
        path.stem
        for path in (ROOT / "pipeline" / "commands").glob("*.py")
        if any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in ast.parse(path.read_text()).body)
        and path.stem != "__init__"
    }
    assert modules == set(COMMANDS)


def test_help_lists_the_commands_one_line_each():
    done = pipeline_command("--help")
    assert (done.returncode, done.stderr) == (0, "")
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")]
    assert listed == list(COMMANDS)


def test_an_unknown_command_is_one_line_naming_them():
    done = pipeline_command("analyze")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: unknown command 'analyze'; expected one of: {', '.join(COMMANDS)}"]


def test_a_command_gets_its_own_arguments():
    done = pipeline_command("solve", "pig", "--goal", "10")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("pig goal 10: the first player wins with probability ")
    done = pipeline_command("solve", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m pipeline solve ")
