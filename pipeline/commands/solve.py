"""Exact solutions for evaluation: `python -m pipeline solve pig --goal G [--policy]` and
`python -m pipeline solve connect4 [--weak] < positions`.

Connect-4: one position a line on standard input (1-based columns from the empty board, as in the
standard test sets; anything after the first space is ignored); prints `MOVES s1 ... s7`, the score of
each column from the side to move (-1000 for a full column), or only win/draw/loss signs with --weak.
A bad line gets one error line on standard error naming it, and the next line goes on; the exit status
is 1 if any line was bad, so scripts notice.

Tic-Tac-Mo: `python -m pipeline solve tictacmo [--moves "8 1 2"] [--tie-break next]` prints the max^n
score vector (seats X O A) of the empty board or of the position after the given 1-based cells, the
vector after each legal move, the number of positions solved and the time taken.
"""

from __future__ import annotations

import sys

from pipeline.commands.cli import command_parser, out_of_range
from pipeline.games.pig.solver import MAX_GOAL, hold_thresholds, solve_pig
from pipeline.plumbing.clip import clip


def solve_connect4_lines(lines, weak: bool) -> bool:
    """Print the scores of each line's position; True if every line was a position."""
    from pipeline.games.connect.solvers.connect4 import Connect4Solver

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


def solve_tictacmo_position(moves: str, tie_break: str) -> None:
    from pipeline.games import IllegalMove, make_game
    from pipeline.games.connect.solvers.tictacmo import solve_tictacmo

    game = make_game("tictacmo")
    state = game.initial_state()
    for n, text in enumerate(moves.replace(",", " ").split(), start=1):
        try:
            state, _ = game.step(state, game.parse_move(state, text))
        except IllegalMove as err:
            raise SystemExit(f"error: move {n} ({clip(text, 60)}): {clip(str(err))}") from None
    solution = solve_tictacmo(state, tie_break)
    vector = " ".join(f"{v:+.0f}" for v in solution.value)
    print(game.render(state))
    print(f"tictacmo max^n value (seats X O A, tie-break {tie_break}): {vector}")
    for action, value in solution.move_values.items():
        print(f"  move {game.format_move(action):>2}: " + " ".join(f"{v:+.0f}" for v in value))
    print(f"{solution.positions} positions solved in {solution.seconds:.1f} s")


def main(argv: list[str] | None = None) -> None:
    parser = command_parser("solve", __doc__)
    sub = parser.add_subparsers(dest="game", required=True)
    pig = sub.add_parser("pig", help="two-player Pig by value iteration")
    pig.add_argument("--goal", type=int, default=100)
    pig.add_argument("--policy", action="store_true", help="print the hold threshold for every (i, j)")
    connect4 = sub.add_parser("connect4", help="per-column scores of Connect-4 positions read from stdin")
    connect4.add_argument("--weak", action="store_true", help="win/draw/loss signs only (faster)")
    tictacmo = sub.add_parser("tictacmo", help="max^n values of Tic-Tac-Mo, from the empty board or --moves")
    tictacmo.add_argument("--moves", default="", help="1-based cells played from the empty board, e.g. '8 1 2'")
    tictacmo.add_argument("--tie-break", default="next", choices=("next", "previous", "first"))
    args = parser.parse_args(argv)
    if args.game == "connect4":
        if not solve_connect4_lines(sys.stdin, args.weak):
            sys.exit(1)
        return
    if args.game == "tictacmo":
        solve_tictacmo_position(args.moves, args.tie_break)
        return
    if problem := out_of_range(2, MAX_GOAL, {"--goal": args.goal}):
        parser.error(problem)
    p, rolls = solve_pig(args.goal)
    print(f"pig goal {args.goal}: the first player wins with probability {p[0, 0, 0]:.6f} under optimal play")
    if args.policy:
        print("hold once the turn total reaches: row = own score i, column = opponent score j")
        for i, row in enumerate(hold_thresholds(rolls)):
            print(f"{i:3d}: " + " ".join(f"{t:3d}" for t in row))


if __name__ == "__main__":
    main()
