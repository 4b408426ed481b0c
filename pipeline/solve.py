"""Exact solutions for evaluation: `python -m pipeline.solve pig --goal G [--policy]` and
`python -m pipeline.solve connect4 [--weak] < positions`.

Connect-4: one position a line on standard input (1-based columns from the empty board, as in the
standard test sets; anything after the first space is ignored); prints `MOVES s1 ... s7`, the score of
each column from the side to move (-1000 for a full column), or only win/draw/loss signs with --weak.
A bad line gets one error line on standard error naming it, and the next line goes on.
"""

from __future__ import annotations

import argparse
import sys

from pipeline.pig_solver import hold_thresholds, solve_pig


def solve_connect4_lines(lines, weak: bool) -> None:
    from pipeline.connect4_solver import Connect4Solver

    solver = Connect4Solver()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        moves = line.split()[0]
        try:
            scores = solver.column_scores(moves, weak)
        except ValueError as err:
            print(f"error: line {number} ({moves}): {err}", file=sys.stderr)
            continue
        print(moves, *scores, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m pipeline.solve", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="game", required=True)
    pig = sub.add_parser("pig", help="two-player Pig by value iteration")
    pig.add_argument("--goal", type=int, default=100)
    pig.add_argument("--policy", action="store_true", help="print the hold threshold for every (i, j)")
    connect4 = sub.add_parser("connect4", help="per-column scores of Connect-4 positions read from stdin")
    connect4.add_argument("--weak", action="store_true", help="win/draw/loss signs only (faster)")
    args = parser.parse_args(argv)
    if args.game == "connect4":
        solve_connect4_lines(sys.stdin, args.weak)
        return
    if args.goal < 2:
        parser.error("--goal must be at least 2")
    p, rolls = solve_pig(args.goal)
    print(f"pig goal {args.goal}: the first player wins with probability {p[0, 0, 0]:.6f} under optimal play")
    if args.policy:
        print("hold once the turn total reaches: row = own score i, column = opponent score j")
        for i, row in enumerate(hold_thresholds(rolls)):
            print(f"{i:3d}: " + " ".join(f"{t:3d}" for t in row))


if __name__ == "__main__":
    main()
