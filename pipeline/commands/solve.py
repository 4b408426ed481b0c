"""Exact solutions, brought by the games that have a solver: `python -m pipeline solve GAME [options]`.

GAME is any game spec whose game brings a solver of its own (`games/base.py`'s `BringsSolver`), a
plugin's included; each solver parses options of its own: `python -m pipeline solve GAME --help`.
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
        solved = ", ".join(solved_games()) or "none is installed"
        parser.add_argument("game", help=f"a game that brings a solver: {solved}")
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


def solved_games() -> list[str]:
    """The registered games that bring a solver, named by the registry (a game that fails to build is left out)."""
    from pipeline.games import game_names, make_game
    from pipeline.games.base import solver_of

    solved = []
    for name in game_names():
        try:
            if solver_of(make_game(name)) is not None:
                solved.append(name)
        except Exception:  # a broken plugin: its own `solve NAME` says why, not the help
            continue
    return solved


if __name__ == "__main__":
    main()
