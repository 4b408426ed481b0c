"""The Connect-4 mistakes benchmark: on Pascal Pons' test positions, how often does the network's
move have a worse win / draw / loss outcome than the best move available? (Its command:
`alphazero_games/connect/commands/pons_benchmark.py`.)

A file is either a test set (`MOVES SCORE` a line, as `Test_L2_R1`) or a labelled set (`MOVES s1 ... s7`,
the exact score of every column, −1000 for a full one, as `cols_L2_R1.txt`). Outcomes of the columns
come from the labels when the file has them, else from the perfect solver (win/draw/loss only). The
raw policy (`--sims 0`) picks the most probable legal move, PUCT search the most visited one, Gumbel
search (`--root gumbel`, no noise) sequential halving's choice.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from alphazero_games.connect.positions import CONNECT4
from alphazero_games.connect.solvers.connect4 import Connect4Solver
from pipeline.games import IllegalMove
from pipeline.games.moves import read_position
from pipeline.search import SearchConfig
from pipeline.search.analysis import search_positions

# Sets with per-column labels, and Begin-Medium (its chosen moves solve in well under a second).
# Begin-Hard (Test_L1_R3) takes seconds a move to solve: name it to include it.
DEFAULT_FILES = ["cols_L3_R1.txt", "cols_L2_R1.txt", "cols_L2_R2.txt", "cols_L1_R1.txt", "Test_L1_R2"]


def set_name(path: Path) -> str:
    """`cols_L2_R1.txt` and `Test_L2_R1` are the same positions: name both `Test_L2_R1`."""
    stem = path.name.removesuffix(".txt")
    return "Test_" + stem.removeprefix("cols_") if stem.startswith("cols_") else stem


def read_set(path: Path, limit: int | None = None) -> list[tuple[str, list[int]]]:
    """(moves, [position score] or the seven column scores) per line; ValueError naming the file and
    line on a bad one."""
    positions = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as err:
        raise ValueError(f"{path}: cannot read ({err.strerror})") from None
    for number, line in enumerate(lines[:limit], start=1):
        fields = line.split()
        if len(fields) not in (2, 8) or not fields[0].isdigit() or not _integers(fields[1:]):
            raise ValueError(f"{path}: line {number}: expected 'MOVES SCORE' or 'MOVES s1 ... s7', got {line!r}")
        positions.append((fields[0], [int(f) for f in fields[1:]]))
    return positions


def _integers(fields: list[str]) -> bool:
    return all(f.lstrip("-").isdigit() for f in fields)


class ColumnOutcomes:
    """Win (1), draw (0), loss (-1) of playing a column, from the side to move: read from the labels
    when a line has all seven, else solved once and remembered (choosers often agree)."""

    def __init__(self):
        self.solver = Connect4Solver()
        self.solved: dict[tuple[str, int], int] = {}

    def __call__(self, moves: str, scores: list[int], column: int) -> int:
        if len(scores) == 7:
            return int(np.sign(scores[column]))
        if (moves, column) not in self.solved:
            self.solved[moves, column] = int(np.sign(self.solver.column_score(moves, column)))
        return self.solved[moves, column]


def mistake_rates(game, evaluator, files: list[Path], positions: int | None, sims: list[int], config=None) -> list:
    """One row per (file, chooser): positions, mistakes and their percentage.

    A labelled file gives every column's outcome; otherwise the position's score is the best outcome
    and only the chosen column is solved (one solve a chooser and position, not seven)."""
    outcome = ColumnOutcomes()
    rows = []
    for path in files:
        entries = read_set(path, positions)
        states = []
        for number, (moves, _) in enumerate(entries, start=1):
            try:
                states.append(read_position(game, moves)[1])
            except IllegalMove as err:
                raise ValueError(f"{path}: line {number}: {err}") from None
        config = config or SearchConfig()
        for budget in sims:
            choices, _, _ = search_positions(game, evaluator, states, budget, config)
            mistakes = 0
            for (moves, scores), state, chosen in zip(entries, states, choices):
                legal = game.legal_actions(state)
                best = max(np.sign(scores[a]) for a in legal) if len(scores) == 7 else np.sign(scores[0])
                mistakes += outcome(moves, scores, chosen) < best
            rows.append(
                {
                    "set": set_name(path),
                    "chooser": "policy" if budget == 0 else f"{search_name(config)} {budget}",
                    "positions": len(states),
                    "mistakes": int(mistakes),
                    "percent": 100.0 * mistakes / len(states),
                }
            )
    return rows


def search_name(config: SearchConfig) -> str:
    """PUCT rows keep their old name, `search N`; Gumbel rows read `gumbel N`."""
    return "gumbel" if config.root == "gumbel" else "search"


def positions_dir(data_dir: Path | str | None) -> Path:
    """The folder of test sets: `data_dir`, or the sets shipped in the package when None."""
    return CONNECT4 if data_dir is None else Path(data_dir)


def resolve_files(data_dir: Path | str | None, names: list[str]) -> list[Path]:
    """Names in `data_dir` (None: the sets shipped in the package) or paths; the default sets when
    `names` is empty (those present)."""
    data_dir = positions_dir(data_dir)
    if names:
        return [Path(n) if Path(n).exists() else data_dir / n for n in names]
    return [data_dir / n for n in DEFAULT_FILES if (data_dir / n).exists()]
