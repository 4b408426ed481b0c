"""`python -m pipeline <command>`: the help lists every command module with one line, an unknown
command is one error line naming them, and a command runs with its own arguments."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline.commands import COMMANDS, brought_commands

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
    """The library's commands, then those the installed games bring (Connect-4's benchmarks), each with
    the first sentence of its module's docstring."""
    done = pipeline_command("--help")
    assert (done.returncode, done.stderr) == (0, "")
    listed = [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  ")]
    assert listed == [*COMMANDS, *brought_commands()]
    assert {"connect4_benchmark", "benchmark_curve"} <= set(brought_commands())
    assert "  connect4_benchmark  Connect-4 mistakes of one network on Pons' test positions" in done.stdout


def test_an_unknown_command_is_one_line_naming_them():
    done = pipeline_command("analyze")
    assert done.returncode == 2 and done.stdout == ""
    names = ", ".join([*COMMANDS, *brought_commands()])
    assert done.stderr.splitlines() == [f"error: unknown command 'analyze'; expected one of: {names}"]


def test_a_command_gets_its_own_arguments():
    done = pipeline_command("solve", "pig", "--goal", "10")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("pig goal 10: the first player wins with probability ")
    done = pipeline_command("solve", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m pipeline solve ")


def test_a_reader_that_stops_early_gets_no_traceback():
    """`python -m pipeline champions | head -1`: the pipe closes before the command has printed."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "champions"], stdout=write, stderr=subprocess.PIPE, env=env
    )
    os.close(write)
    assert (done.returncode, done.stderr) == (141, b"")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["analyse", "--simulations", "99999999999"], "--simulations: expected at most 1,000,000, got 99,999,999,999"),
        (["play", "--seed", "-1"], "--seed: expected an integer of at least 0, got -1"),
        (["match", "tictacmo", "uct:4", "--seed", "-5"], "--seed: expected an integer of at least 0, got -5"),
        (["match", "tictacmo", "uct:99999999999"], "uct:99999999999: neither a checkpoint file nor a baseline"),
        (
            ["match", "tictacmo", "uct:4", "--games-per-seating", "999999999999999"],
            "--games-per-seating: expected at most",
        ),
        (
            ["match", "kingdomino", "random", "--games-per-seating", "10000000"],
            "x 14 seatings of kingdomino(players=4,size=5,middle=0,harmony=0,fit=1) is over 1,000,000 games",
        ),
        (["solve", "pig", "--goal", "99999999999"], "--goal: expected at most 200, got 99,999,999,999"),
        (["sweep", "--report-only", "--out", "README.md"], "--out: README.md is a file; expected the report's folder"),
        (["bench", "--threads", "-1"], "--threads: expected an integer of at least 0, got -1"),
        (["connect4_benchmark", "connect4", "--simulations", "-1"], "--simulations: expected an integer of at least 0"),
        (["connect4_benchmark", "connect4", "--positions", "0"], "--positions: expected a positive integer, got 0"),
        (["connect4_benchmark", "connect4", "--c-puct", "nan"], "--c-puct: expected a positive number, got nan"),
        (["match", "tictacmo", "uct:4", "--move-time", "inf"], "--move-time: expected seconds above 0, at most 3,600"),
        (["match", "tictacmo", "uct:4", "--move-time", "nan"], "--move-time: expected seconds above 0, at most 3,600"),
        (["match", "tictacmo", "uct:4", "--move-time", "-1"], "--move-time: expected seconds above 0, at most 3,600"),
        (["match", "tictacmo", "uct:99999999s"], "uct:99999999s: neither a checkpoint file nor a baseline"),
        (["match", "tictacmo", "uct:\u0663"], "uct:\u0663: neither a checkpoint file nor a baseline"),  # an Arabic 3
        (["match", "tictacmo", "uct:\u00b2"], "uct:\u00b2: neither a checkpoint file nor a baseline"),  # a superscript
        (["match", "tictacmo", ""], "'': neither a checkpoint file nor a baseline"),
        (["match", "", "uct:4"], "'': neither a checkpoint file nor a shipped champion"),
        (["match", "uct:4", "random", "--game", "x" * 5000], "unknown game 'xxxxxxxx"),
        (["match", "x" * 300, "random", "--game", "tictactoe"], "file name too long (at most 255 bytes a name)"),
        (["match", "tictacmo", "y" * 300], "file name too long (at most 255 bytes a name)"),
        (["export", "tictacmo", "z" * 300 + ".onnx"], "file name too long (at most 255 bytes a name)"),
    ],
)
def test_a_number_no_machine_can_use_is_one_error_line(argv, message, capsys):
    from pipeline.commands import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    assert stopped.value.code in (1, 2) and "Traceback" not in err
    assert message in err.strip().splitlines()[-1] and len(err.strip().splitlines()[-1]) < 400


BAD_PARAMS = {"recursive.yaml": "x: &r [*r]\n", "unknown-game.yaml": "game: chess\ngenerations: [{gen: 1, prev: 0}]\n"}
NO_HEAVY_IMPORT = """
import sys
from pipeline.commands import main
try:
    main(sys.argv[1:])
finally:
    print(sorted(m for m in ("torch", "lightning", "pytorch_lightning", "mlflow", "optuna") if m in sys.modules))
"""


@pytest.mark.parametrize("name", sorted(BAD_PARAMS))
@pytest.mark.parametrize(
    "argv", [["match", "tictacmo", "uct:4"], ["sweep"], ["play", "tictacmo"], ["analyse", "tictacmo"]]
)
def test_a_bad_params_file_is_one_line_before_torch_mlflow_or_optuna_is_imported(argv, name, tmp_path):
    """Those imports take seconds, a minute on a loaded machine: a bad file must not wait for them."""
    path = tmp_path / name
    path.write_text(BAD_PARAMS[name])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", NO_HEAVY_IMPORT, *argv, "--params", str(path)], env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1 and done.stdout == "[]\n"
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(f"error: {path}: ")


CONNECT4_FILE = str(ROOT / "pipeline" / "champions" / "connect4.ckpt")  # a file: its game read without torch


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["match", "tictacmo", "random", "--move-time", "inf"], "error: --move-time: expected seconds above 0"),
        (["match", "tictacmo", "uct:٣"], "error: uct:٣: neither a checkpoint file nor a baseline"),
        (["match", "tictacmo", ""], "error: '': neither a checkpoint file nor a baseline"),
        (["match", "greedy", "random"], "error: greedy: A is a baseline; give the game to play with --game"),
        (["match", "tictacmo", "random", "--games-per-seating", "0"], "error: --games-per-seating"),
        (["match", "kingdomino", "random", "--games-per-seating", "10000000"], "x 14 seatings of kingdomino"),
        (["match", "tictacmo", "tictacmo", "--second-params", "no.yaml"], "error: no.yaml: file not found"),
        (["match", "no-such", "random"], "error: no-such: neither a checkpoint file nor a shipped champion"),
        (["match", "tictacmo", "random", "--game", "chess"], "error: unknown game 'chess'"),
        (["match", "best", "random"], "error: best: metrics/summary.json: No such file or directory"),
        (["match", "tictacmo", "alphabeta:3"], "error: unknown player 'alphabeta:3'; expected uct:N, mce:N, greedy or"),
        (
            ["match", "random", "hold:5", "--game", "connect4"],
            "or one of the players connect4 brings: alphabeta, solver",
        ),
        (["match", CONNECT4_FILE, "hold:5"], "or one of the players connect4 brings: alphabeta, solver"),
        (["play", CONNECT4_FILE, "--seats", "human,az,az"], "error: --seats names 3 seats, but the game has 2"),
        (["play", "--game", "tictacmo", "--seats", "uct:٣"], "error: --seats: 'uct:٣': expected uct:N"),
        (["play", "tictacmo", "--seats", "human,bogus"], "error: --seats: unknown player 'bogus'"),
        (["play", "tictacmo", "--game", "chess"], "error: unknown game 'chess'"),
        (["play", "tictacmo", "--sims", "0"], "error: --simulations: expected a positive integer, got 0"),
        (["analyse", "tictacmo", "--simulations", "-1"], "error: --simulations: expected an integer of at least 0"),
        (["analyse", "tictacmo", "--game", "chess"], "error: unknown game 'chess'"),
        (["analyse", "tictacmo", "--batch", "0"], "error: --batch: expected a positive integer, got 0"),
        (["bench", "--batch", "0"], "error: --batch: expected a positive integer, got 0"),
        (["sweep", "--jobs", "0"], "error: --jobs: expected a positive integer, got 0"),
        (["export", "tictacmo", "."], "error: .: is a folder; expected the ONNX file to write"),
        (["export", "tictacmo", "/sys/t.onnx"], "error: /sys/t.onnx: cannot be written"),  # no file, even for root
        (["export", "nosuchnet", "x.onnx"], "error: nosuchnet: neither a checkpoint file nor a shipped champion"),
        (["compare", "--tracking-uri", "bogus://x"], "error: MLflow store bogus://x: unknown scheme bogus://"),
        (["sweep", "--play", "tictacmo", "--trials", "0"], "error: --trials: expected a positive integer, got 0"),
    ],
)
def test_a_bad_argument_is_one_line_before_torch_is_imported(argv, message, tmp_path):
    """A command's arguments are checked before its networks, search and workers are imported (0.6-1.0 s
    against 1.9-2.3 s on an idle machine when written), and before Lightning, MLflow and Optuna;
    argparse's error line comes after its usage."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", NO_HEAVY_IMPORT, *argv], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode in (1, 2) and done.stdout == "[]\n"
    last = done.stderr.splitlines()[-1]
    assert message in last and "Traceback" not in done.stderr, done.stderr


SWEEP_MISTAKES = {
    "panel": ({"panel": ["bogus"]}, [], "error: sweep.panel[0]: unknown player 'bogus'"),
    "space": ({"space": {"search.c_puct": {"low": -5, "high": -1}}}, [], "error: sweep.space: 'search.c_puct' = -5"),
    "play panel": (
        {"play": {"panel": ["shipped", "optimal"]}},
        ["--play", "tictacmo", "--params", "params.yaml"],
        "error: sweep.play.panel[1]",
    ),
    "population panel": ({"population": {"panel": ["bogus"]}}, ["--population"], "error: sweep.population.panel[0]"),
    "token": ({}, ["--storage", "postgresql://127.0.0.1:1/db?token=S3cret"], "error: storage postgresql://"),
}


@pytest.mark.parametrize("mistake", sorted(SWEEP_MISTAKES))
def test_a_sweep_panel_space_or_storage_mistake_is_one_line_before_torch_is_imported(mistake, tmp_path):
    """Issue 82: `sweep`'s panel, space and storage checks took torch's and the study's imports first
    (about 4 s on 2 cores); they read the params alone (the storage takes Optuna's driver)."""
    sweep, argv, message = SWEEP_MISTAKES[mistake]
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data["sweep"] = {**data["sweep"], **sweep}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", NO_HEAVY_IMPORT, "sweep", *argv], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1 and "torch" not in done.stdout and "mlflow" not in done.stdout, done.stdout
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(message), done.stderr
    assert "S3cret" not in done.stderr and not (tmp_path / "sweep.db").exists()
