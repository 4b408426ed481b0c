"""`python -m pipeline solve connect4 [--weak] < positions`, `solve connect4 --time DIR [--positions N]`
and `solve tictacmo [--moves "8 1 2"] [--tie-break next]`.

Connect-4: one position a line on standard input (1-based columns from the empty board, as in the
standard test sets; anything after the first space is ignored); prints `MOVES s1 ... s7`, the score of
each column from the side to move (-1000 for a full column), or only win/draw/loss signs with --weak.
A bad line gets one error line on standard error naming it, and the next line goes on; the exit status
is 1 if any line was bad, so scripts notice. `--time DIR`: the solver's mean and max seconds a position
on the first N lines of each of Pons' six test sets in DIR (docs/results/solvers.md).

Tic-Tac-Mo: prints the max^n score vector (seats X O A) of the empty board or of the position after the
given 1-based cells, the vector after each legal move, the number of positions solved and the time taken.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from pipeline.commands.cli import command_parser, out_of_range
from pipeline.config import MAX_GAMES
from pipeline.games import IllegalMove
from pipeline.plumbing.clip import clip

TEST_SETS = ("Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2", "Test_L1_R3")


def connect4(game, argv: list[str]) -> None:
    parser = command_parser("solve connect4", __doc__)
    parser.add_argument("--weak", action="store_true", help="win/draw/loss signs only (faster)")
    parser.add_argument("--time", type=Path, metavar="DIR", help="instead: solver times on the test sets in DIR")
    parser.add_argument("--positions", type=int, default=20, help="with --time: positions per set")
    parser.add_argument("--json", action="store_true", help="with --time: the figures as JSON")
    args = parser.parse_args(argv)
    if problem := out_of_range(1, MAX_GAMES, {"--positions": args.positions}):
        parser.error(problem)
    if args.time is None:
        if not solve_connect4_lines(sys.stdin, args.weak):
            sys.exit(1)
        return
    if not (args.time / TEST_SETS[-1]).exists():
        parser.error(f"--time: {args.time} does not hold the Connect-4 test sets ({', '.join(TEST_SETS)})")
    figures = solver_times(args.time, args.positions)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, row in figures.items():
        print(f"{name:12s} " + "  ".join(f"{key} {value:,.4g}" for key, value in row.items()))


def solve_connect4_lines(lines, weak: bool) -> bool:
    """Print the scores of each line's position; True if every line was a position."""
    from alphazero_games.connect.solvers.connect4 import Connect4Solver

    solver = Connect4Solver()
    all_good = True
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        moves = line.split()[0]
        try:
            scores = solver.column_scores(moves, weak)
        except ValueError as err:
            print(f"error: line {number} ({clip(moves, 60)}): {clip(str(err))}", file=sys.stderr, flush=True)
            all_good = False
            continue
        print(moves, *scores, flush=True)
    return all_good


def solver_times(data: Path, per_set: int) -> dict[str, dict[str, float]]:
    """Connect-4 solver: mean and max seconds per position on the first `per_set` lines of each set."""
    from alphazero_games.connect.solvers.connect4 import Connect4Solver

    solver = Connect4Solver()
    solver.solve("2252576253462244111563365343671351441")  # compile
    figures = {}
    for name in TEST_SETS:
        times, wrong = [], 0
        for line in (data / name).read_text().splitlines()[:per_set]:
            moves, score = line.split()
            started = time.perf_counter()
            wrong += solver.solve(moves) != int(score)
            times.append(time.perf_counter() - started)
        figures[name] = {"positions": len(times), "mean_s": float(np.mean(times)), "max_s": max(times), "wrong": wrong}
    return figures


def tictacmo(game, argv: list[str]) -> None:
    from alphazero_games.connect.solvers.tictacmo import solve_tictacmo

    parser = command_parser("solve tictacmo", __doc__)
    parser.add_argument("--moves", default="", help="1-based cells played from the empty board, e.g. '8 1 2'")
    parser.add_argument("--tie-break", default="next", choices=("next", "previous", "first"))
    args = parser.parse_args(argv)
    state = game.initial_state()
    for n, text in enumerate(args.moves.replace(",", " ").split(), start=1):
        try:
            state, _ = game.step(state, game.parse_move(state, text))
        except IllegalMove as err:
            raise SystemExit(f"error: move {n} ({clip(text, 60)}): {clip(str(err))}") from None
    solution = solve_tictacmo(state, args.tie_break)
    vector = " ".join(f"{v:+.0f}" for v in solution.value)
    print(game.render(state))
    print(f"tictacmo max^n value (seats X O A, tie-break {args.tie_break}): {vector}")
    for action, value in solution.move_values.items():
        print(f"  move {game.format_move(action):>2}: " + " ".join(f"{v:+.0f}" for v in value))
    print(f"{solution.positions} positions solved in {solution.seconds:.1f} s")
