"""`python -m pipeline solve pig --goal G [--policy]`: two-player Pig solved by value iteration, the
first player's winning probability under optimal play and, with --policy, the hold thresholds."""

from __future__ import annotations

from alphazero_games.pig.solver import MAX_GOAL, hold_thresholds, solve_pig
from pipeline.commands.cli import command_parser, out_of_range


def main(game, argv: list[str]) -> None:
    parser = command_parser("solve pig", __doc__)
    parser.add_argument("--goal", type=int, default=game.goal)
    parser.add_argument("--policy", action="store_true", help="print the hold threshold for every (i, j)")
    args = parser.parse_args(argv)
    if problem := out_of_range(2, MAX_GOAL, {"--goal": args.goal}):
        parser.error(problem)
    p, rolls = solve_pig(args.goal)
    print(f"pig goal {args.goal}: the first player wins with probability {p[0, 0, 0]:.6f} under optimal play")
    if args.policy:
        print("hold once the turn total reaches: row = own score i, column = opponent score j")
        for i, row in enumerate(hold_thresholds(rolls)):
            print(f"{i:3d}: " + " ".join(f"{t:3d}" for t in row))
