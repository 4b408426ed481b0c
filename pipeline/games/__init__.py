"""Game registry: `make_game(name)` is the only way the rest of the project obtains a game."""

from __future__ import annotations

from pipeline.games.base import Game, IllegalMove, Symmetry
from pipeline.games.connect import ConnectGame

_GAMES = {
    "tictactoe": lambda: ConnectGame("tictactoe", rows=3, cols=3, k=3, num_players=2, gravity=False),
    "tictacmo": lambda: ConnectGame("tictacmo", rows=3, cols=5, k=3, num_players=3, gravity=False),
    "connect4": lambda: ConnectGame("connect4", rows=6, cols=7, k=4, num_players=2, gravity=True),
    "connect3x3": lambda: ConnectGame("connect3x3", rows=6, cols=7, k=3, num_players=3, gravity=True),
}

GAME_NAMES = tuple(_GAMES)


def make_game(name: str) -> Game:
    try:
        return _GAMES[name]()
    except KeyError:
        raise ValueError(f"unknown game {name!r}; expected one of {', '.join(GAME_NAMES)}") from None


__all__ = ["GAME_NAMES", "Game", "IllegalMove", "Symmetry", "make_game"]
