"""Exact solutions for evaluation: `python -m pipeline.solve pig --goal G [--policy]` and
`python -m pipeline.solve connect4 [--weak] < positions`.

Connect-4: one position a line on standard input (1-based columns from the empty board, as in the
standard test sets; anything after the first space is ignored); prints `MOVES s1 ... s7`, the score of
each column from the side to move (-1000 for a full column), or only win/draw/loss signs with --weak.
A bad line gets one error line on standard error naming it, and the next line goes on.

Two-player Pig by value iteration (Neller & Presser, "Optimal play of the dice game Pig", 2004):
P[i, j, k] is the probability that the player to move wins with banked score i, opponent score j and
turn total k; rolling is worth (1 - P[j, i, 0] + sum over faces 2-6 of P[i, j, k + face]) / 6, holding
1 - P[j, i + k, 0], and P is the better of the two (1 once i + k reaches the goal).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def solve_pig(goal: int, tolerance: float = 1e-10, max_iterations: int = 100_000) -> tuple[np.ndarray, np.ndarray]:
    """Win probabilities P[i, j, k] and the optimal action (True = roll) for i, j, k < goal."""
    g = goal
    i, j, k = np.meshgrid(np.arange(g), np.arange(g), np.arange(g + 6), indexing="ij")
    won = i + k >= g  # holding now reaches the goal
    p = np.where(won, 1.0, 0.5)
    hold_target = np.minimum(i + k, g - 1)[:, :, :g]
    for _ in range(max_iterations):
        lose_turn = 1.0 - p[:, :, 0].T  # after a 1 the opponent moves from (j, i, 0)
        roll = (lose_turn[:, :, None] + sum(p[:, :, face : face + g] for face in range(2, 7))) / 6.0
        opponent_after_hold = p[j[:, :, :g], hold_target, 0]
        hold = np.where(won[:, :, :g], 1.0, 1.0 - opponent_after_hold)
        new = np.where(won[:, :, :g], 1.0, np.maximum(roll, hold))
        change = float(np.abs(new - p[:, :, :g]).max())
        p[:, :, :g] = new
        if change < tolerance:
            break
    rolls = (roll > hold) & ~won[:, :, :g]
    return p[:, :, :g], rolls


def hold_thresholds(rolls: np.ndarray) -> np.ndarray:
    """For each (own score i, opponent score j): the turn total at which the optimal player first holds."""
    g = rolls.shape[0]
    thresholds = np.zeros((g, g), dtype=np.int64)
    for a in range(g):
        for b in range(g):
            holds = np.flatnonzero(~rolls[a, b, : g - a])
            thresholds[a, b] = holds[0] if len(holds) else g - a
    return thresholds


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
