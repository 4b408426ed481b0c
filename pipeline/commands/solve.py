"""Exact solutions, brought by the games that have a solver: `python -m pipeline solve GAME [options]`.

GAME is any game spec whose game brings a solver of its own (`games/base.py`'s `BringsSolver`): of the
project's games, `pig` (value iteration: `--goal G [--policy]`), `connect4` (positions read from
standard input, `[--weak]`, or the solver's times on Pons' sets, `--time DIR`) and `tictacmo` (max^n
values, `[--moves "8 1 2"] [--tie-break next]`). `python -m pipeline solve GAME --help` gives a solver's
own options.
"""

from __future__ import annotations

import sys

from pipeline.commands.cli import command_parser
from pipeline.harness.entry import UsageError, entry_point


@entry_point
def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0].startswith("-"):
        parser = command_parser("solve", __doc__)
        parser.add_argument("game", help="a game that brings a solver: pig, connect4, tictacmo, or a plugin's")
        parser.parse_args(argv)  # --help, or the missing game's one line
    from pipeline.games import make_game
    from pipeline.games.base import solver_of
    from pipeline.games.plugins import load_reference

    try:
        game = make_game(argv[0])
    except ValueError as err:
        raise UsageError(f"solve: {err}") from None
    reference = solver_of(game)
    if reference is None:
        raise UsageError(f"solve: {game.name} brings no solver of its own (games/base.py's BringsSolver)")
    load_reference(f"{game.name}'s solver", reference)(game, argv[1:])


if __name__ == "__main__":
    main()
