"""`best` names the network the run in this folder ended with: the `champion_gen` of the report's
metrics/summary.json, of the game of params.yaml. The `gen_*.ckpt` files an earlier game's run left in
models/best are never played (docs/adding-a-game.md's `match best random` once took the highest number)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from pipeline.games import make_game
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import NetworkShape, SENet

ROOT = Path(__file__).resolve().parents[1]
PARAMS = "game: tictactoe\nworkers: 1\ngenerations: [{gen: 1, prev: 0}, {gen: 2, prev: 1}]\n"


def checkout(folder: Path, summary: dict | None) -> Path:
    """A run of tictactoe whose generation 2 is the champion, beside an earlier run's connect3x3 gen_9."""
    (folder / "params.yaml").write_text(PARAMS)
    (folder / "models/best").mkdir(parents=True)
    torch.manual_seed(0)
    for gen, spec in ((0, "tictactoe"), (1, "tictactoe"), (2, "tictactoe"), (9, "connect3x3")):
        game = make_game(spec)
        save_checkpoint(folder / f"models/best/gen_{gen}.ckpt", SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    if summary is not None:
        (folder / "metrics").mkdir()
        (folder / "metrics/summary.json").write_text(json.dumps(summary))
    return folder


def command(folder: Path, *argv: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "pipeline", *argv], input=stdin, cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_match_and_analyse_play_the_champion_the_report_names(tmp_path):
    folder = checkout(tmp_path, {"champion_gen": 2, "gate_score": 0.5})
    done = command(folder, "match", "best", "random", "--games-per-seating", "1", "--simulations", "2", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["game"], result["first"], result["second"]) == ("tictactoe", "best", "random")
    done = command(folder, "analyse", "best", "--simulations", "0", stdin="\n")
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1 and "move" in done.stdout, done.stderr


def test_a_report_left_by_an_earlier_games_run_is_refused_in_one_line(tmp_path):
    folder = checkout(tmp_path, {"champion_gen": 9})  # the run of params.yaml has not reached its report
    done = command(folder, "match", "best", "random", "--games-per-seating", "1")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: models/best/gen_9.ckpt: trained for game 'connect3x3', but 'tictactoe' was asked for"
    ]


def test_best_without_a_report_is_one_line_naming_the_file(tmp_path):
    done = command(checkout(tmp_path, None), "match", "best", "random")
    assert done.returncode == 1 and done.stderr.splitlines() == [
        "error: best: metrics/summary.json: No such file or directory; expected a finished run (dvc repro)"
    ]
