"""The Connect-4 mistakes benchmark: on Pascal Pons' test positions, how often does the network's
move have a worse win / draw / loss outcome than the best move available?

`python -m pipeline.connect4_benchmark CHECKPOINT [--sims 0 100] [--files F ...] [--positions N] [--json]`

A file is either a test set (`MOVES SCORE` a line, as `Test_L2_R1`) or a labelled set (`MOVES s1 ... s7`,
the exact score of every column, −1000 for a full one, as `cols_L2_R1.txt`). Outcomes of the columns
come from the labels when the file has them, else from the perfect solver (win/draw/loss only). The
raw policy (`--sims 0`) picks the most probable legal move, search the most visited one.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from pipeline.analyse import analyse, read_position
from pipeline.cli import entry_point
from pipeline.connect4_solver import Connect4Solver
from pipeline.games import IllegalMove, make_game
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.nets.evaluator import NetworkEvaluator
from pipeline.search import CachingEvaluator, SearchConfig

# Sets with per-column labels, and Begin-Medium (solved in about 1 s a position). Begin-Hard
# (Test_L1_R3) takes about 30 s a position to label: name it to include it.
DEFAULT_FILES = ["cols_L3_R1.txt", "cols_L2_R1.txt", "cols_L2_R2.txt", "cols_L1_R1.txt", "Test_L1_R2"]
FULL = -1000


def set_name(path: Path) -> str:
    """`cols_L2_R1.txt` and `Test_L2_R1` are the same positions: name both `Test_L2_R1`."""
    stem = path.name.removesuffix(".txt")
    return "Test_" + stem.removeprefix("cols_") if stem.startswith("cols_") else stem


def read_set(path: Path, limit: int | None = None) -> list[tuple[str, list[int] | None]]:
    """(moves, column scores or None) per line; ValueError naming the file and line on a bad one."""
    positions = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror})") from None
    for number, line in enumerate(lines[:limit], start=1):
        fields = line.split()
        if len(fields) not in (2, 8) or not fields[0].isdigit() or not _integers(fields[1:]):
            raise ValueError(f"{path}: line {number}: expected 'MOVES SCORE' or 'MOVES s1 ... s7', got {line!r}")
        positions.append((fields[0], [int(f) for f in fields[1:]] if len(fields) == 8 else None))
    return positions


def _integers(fields: list[str]) -> bool:
    return all(f.lstrip("-").isdigit() for f in fields)


def column_outcomes(solver: Connect4Solver, moves: str, labels: list[int] | None) -> np.ndarray:
    """Win (1), draw (0), loss (−1) of every column from the side to move; −2 for a full column."""
    scores = labels if labels is not None else solver.column_scores(moves, weak=True)
    return np.array([-2 if s == FULL else int(np.sign(s)) for s in scores])


def mistake_rates(game, evaluator, files: list[Path], positions: int | None, sims: list[int], config=None) -> list:
    """One row per (file, chooser): positions, mistakes and their percentage."""
    solver = Connect4Solver()
    rows = []
    for path in files:
        entries = read_set(path, positions)
        states, outcomes = [], []
        for number, (moves, labels) in enumerate(entries, start=1):
            try:
                states.append(read_position(game, moves)[1])
            except IllegalMove as err:
                raise ValueError(f"{path}: line {number}: {err}") from None
            outcomes.append(column_outcomes(solver, moves, labels))
        outcomes = np.stack(outcomes)
        for budget in sims:
            policies, _ = analyse(game, evaluator, states, budget, config or SearchConfig())
            policies = np.where(outcomes == -2, -1.0, policies)  # never a full column
            chosen = outcomes[np.arange(len(states)), policies.argmax(axis=1)]
            mistakes = int((chosen < outcomes.max(axis=1)).sum())
            rows.append(
                {
                    "set": set_name(path),
                    "chooser": "policy" if budget == 0 else f"search {budget}",
                    "positions": len(states),
                    "mistakes": mistakes,
                    "percent": 100.0 * mistakes / len(states),
                }
            )
    return rows


def resolve_files(data_dir: Path, names: list[str]) -> list[Path]:
    """Names in `data_dir` or paths; the default sets when `names` is empty (those present)."""
    if names:
        return [Path(n) if Path(n).exists() else data_dir / n for n in names]
    return [data_dir / n for n in DEFAULT_FILES if (data_dir / n).exists()]


@entry_point
def main(argv):
    parser = argparse.ArgumentParser(prog="python -m pipeline.connect4_benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint")
    parser.add_argument("--sims", type=int, nargs="+", default=[0, 100], help="0 = the raw policy")
    parser.add_argument("--files", nargs="+", default=[], help=f"default: {' '.join(DEFAULT_FILES)}")
    parser.add_argument("--data-dir", default="../shared/data/connect4")
    parser.add_argument("--positions", type=int, default=100, help="first N positions of each file")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    game = make_game("connect4")
    files = resolve_files(Path(args.data_dir), args.files)
    if not files:
        parser.error(f"no test files found in {args.data_dir}; give --files or --data-dir")
    evaluator = CachingEvaluator(NetworkEvaluator(game, load_checkpoint(args.checkpoint, game.name)))
    try:
        rows = mistake_rates(game, evaluator, files, args.positions, args.sims)
    except ValueError as err:
        parser.exit(1, f"error: {err}\n")
    for row in rows:
        print(json.dumps(row) if args.json else f"{row['set']:12s} {row['chooser']:12s} {row['percent']:6.2f}% "
              f"mistakes ({row['mistakes']}/{row['positions']})")  # fmt: skip


if __name__ == "__main__":
    main()
