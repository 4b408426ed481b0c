"""Issue 82's tries, run again as a user runs them: each command's exit status, lines of output (the
progress bar left out), seconds from start to exit, and the last line, as a Markdown table.

    python benchmarks/early_errors.py FOLDER [CHECKOUT]

FOLDER is made and holds the files the tries name (a plugin game, lying checkpoints, params files);
CHECKOUT is the project to run (default: this one), so that two commits can be timed on one machine.
Benchmarks measure: nothing here asserts; the tests in tests/ assert each behaviour.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

MAKE_FILES = r"""
import zipfile
import torch
from pipeline.games import make_game
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import NetworkShape, SENet

game = make_game("connect4")
shape = NetworkShape.for_game(game, 1, 8, 2)
torch.manual_seed(0)
save_checkpoint("misfit.ckpt", SENet(NetworkShape(**{**shape.to_dict(), "num_players": 1})), game.name)
save_checkpoint("good.ckpt", SENet(shape), game.name)
model = SENet(shape)
with torch.no_grad():
    next(model.parameters())[0] = float("nan")
save_checkpoint("nan.ckpt", model, game.name)
with zipfile.ZipFile("good.ckpt") as source, zipfile.ZipFile("bomb.ckpt", "w") as bomb:
    for member in source.infolist():
        bomb.writestr(member.filename, source.read(member), compress_type=zipfile.ZIP_DEFLATED)
payload = torch.load("good.ckpt", weights_only=True)
payload["shape"].update(blocks=100_000, channels=4096)
torch.save(payload, "huge.ckpt")
payload = torch.load("good.ckpt", weights_only=True)
payload["game"] = "pig(goal=1000000000000)"
torch.save(payload, "pig.ckpt")
"""

PARAMS = {
    "c4.yaml": "game: connect4\ngenerations: [{gen: 1, prev: 0}]\n",
    "dup.yaml": "game: tictacmo\nseed: 1\nseed: 2\ngenerations: [{gen: 1, prev: 0}]\n",
    "leaves.yaml": "game: tictacmo\nsearch: {parallel_leaves: 1000000000}\ngenerations: [{gen: 1, prev: 0}]\n",
}
SWEEPS = {  # each with the one generation a params file needs
    "space.yaml": "{space: {search.c_puct: {low: 0, high: 1, log: true}}}",
    "bounds.yaml": "{space: {search.c_puct: {low: -5, high: -1}}}",
    "choices.yaml": "{space: {search.root: {choices: [bogus]}}}",
    "panel.yaml": "{panel: [bogus]}",
    "play-space.yaml": "{play: {space: {search.parallel_leaves: {low: 1e9, high: 2e9}}}}",
}
PARAMS.update(
    {name: f"game: tictacmo\ngenerations: [{{gen: 1, prev: 0}}]\nsweep: {sweep}\n" for name, sweep in SWEEPS.items()}
)


def tries(python: list[str]) -> list[tuple[str, list[str]]]:
    pipeline = [*python, "-m", "pipeline"]
    match = [*pipeline, "match"]
    return [
        ("a plugin game that never ends", [*match, "random", "uct:5", "--game", "endless:NeverEnds"]),
        ("a plugin's step that raises at move 401", [*match, "uct:2", "random", "--game", "endless:LateStep"]),
        ("a plugin's legal mask empty at move 400", [*match, "random", "random", "--game", "endless:LateMask"]),
        ("a plugin's seat out of range at move 400", [*match, "random", "random", "--game", "endless:LateSeat"]),
        ("a plugin's NaN scores, no network playing", [*match, "uct:3", "random", "--game", "endless:NanScores"]),
        ("Pig's goal 10^12", [*match, "random", "random", "--game", "pig(goal=1000000000000)"]),
        ("a checkpoint whose game is Pig's goal 10^12", [*match, "pig.ckpt", "random"]),
        (
            "10,000,000 games a seating of Kingdomino",
            [*match, "kingdomino", "random", "--games-per-seating", "10000000"],
        ),  # fmt: skip
        ("parallel_leaves 10^9 in --params", [*match, "tictacmo", "random", "--params", "leaves.yaml"]),
        ("a recorded shape of 100,000 blocks x 4,096 channels", [*match, "huge.ckpt", "random"]),
        ("a checkpoint archive whose members are deflated", [*match, "bomb.ckpt", "random"]),
        ("a Connect-4 network whose shape says one player (match)", [*match, "misfit.ckpt", "random"]),
        ("the same, analyse", [*pipeline, "analyse", "misfit.ckpt"]),
        ("the same, export", [*pipeline, "export", "misfit.ckpt", "misfit.onnx"]),
        ("the same, sweep --play", [*pipeline, "sweep", "--play", "misfit.ckpt"]),
        ("NaN weights, exported", [*pipeline, "export", "nan.ckpt", "nan.onnx"]),
        ("--params of another game", [*match, "tictacmo", "random", "--params", "c4.yaml"]),
        ("a params key given twice", [*match, "tictacmo", "random", "--params", "dup.yaml"]),
        (
            "a token in the storage URL's query",
            [*pipeline, "sweep", "--params", "c4.yaml", "--storage", "postgresql://127.0.0.1:1/db?token=S3cretTOKEN"],
        ),  # fmt: skip
        ("a space {low: 0, log: true}", [*pipeline, "sweep", "--params", "space.yaml"]),
        ("a space outside the param's bounds", [*pipeline, "sweep", "--params", "bounds.yaml"]),
        ("a space's choices: [bogus]", [*pipeline, "sweep", "--params", "choices.yaml"]),
        (
            "a play-time space of parallel_leaves 1e9-2e9",
            [*pipeline, "sweep", "--play", "tictacmo", "--params", "play-space.yaml"],
        ),  # fmt: skip
        ("a panel player the game does not know", [*pipeline, "sweep", "--params", "panel.yaml"]),
        ("sweep with no params.yaml", [*pipeline, "sweep"]),
        ("sweep --play nosuch", [*pipeline, "sweep", "--play", "nosuch"]),
        ("--second-params missing", [*match, "tictacmo", "tictacmo", "--second-params", "missing.yaml"]),
        ("export into a folder that cannot be written", [*pipeline, "export", "tictacmo", "/sys/t.onnx"]),
        ("export nosuchnet", [*pipeline, "export", "nosuchnet", "x.onnx"]),
        ("compare --tracking-uri bogus://x", [*pipeline, "compare", "--tracking-uri", "bogus://x"]),
        ("play ../../etc/passwd", [*pipeline, "play", "../../etc/passwd"]),
    ]


def main(folder: Path, checkout: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    guide = (checkout / "docs" / "adding-a-game.md").read_text()
    nim = next(block for block in guide.split("```python")[1:] if "class Nim:" in block).split("```")[0]
    (folder / "nim.py").write_text(nim)
    (folder / "endless.py").write_text((checkout / "tests" / "endless_games.py").read_text())
    for name, text in PARAMS.items():
        (folder / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": f"{checkout}{os.pathsep}{folder}"}
    subprocess.run([sys.executable, "-c", MAKE_FILES], env=env, cwd=folder, check=True)
    print("| try | exit | lines | seconds | the line |")
    print("| --- | --- | --- | --- | --- |")
    for name, argv in tries([sys.executable]):
        started = time.perf_counter()
        try:
            done = subprocess.run(argv, env=env, cwd=folder, capture_output=True, text=True, timeout=120)
            output, code = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired:
            output, code = "(killed after 120 s)", "hang"
        seconds = time.perf_counter() - started
        lines = [line for line in output.splitlines() if line.strip() and "it/s]" not in line and "?it/s" not in line]
        last = (lines[-1] if lines else "").replace("|", "/")
        leaked = " (the token printed!)" if "S3cretTOKEN" in output else ""
        print(f"| {name} | {code} | {len(lines)} | {seconds:.1f} | `{last[:140]}`{leaked} |", flush=True)


if __name__ == "__main__":
    here = Path(__file__).resolve().parents[1]
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else here)
