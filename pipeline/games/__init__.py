"""Game registry: `make_game(spec)` is the only way the rest of the project obtains a game.

A spec is a name with optional integer options, `pig(players=3,goal=50)`, `openspiel:` followed by
any OpenSpiel game string, `openspiel:backgammon`, or a game from outside the package (`plugins.py`):
`mypkg.rules:MyGame(size=4)`, or the name an installed package registers for it. A game's `name` is
its full spec, so a worker process or a checkpoint check rebuilds exactly the same game from it.
"""

from __future__ import annotations

import inspect
import re

from pipeline.games.base import Game, IllegalMove, Symmetry
from pipeline.games.connect.rules import ConnectGame
from pipeline.games.contract import GameFault, check_contract
from pipeline.games.kingdomino.compiled import CompiledKingdomino
from pipeline.games.pig.rules import PigGame
from pipeline.games.plugins import named_plugin, plugin_class, plugin_parts, registered_games
from pipeline.plumbing.clip import clip, quoted

_GAMES = {
    "tictactoe": lambda: ConnectGame("tictactoe", rows=3, cols=3, k=3, num_players=2, gravity=False),
    "tictacmo": lambda: ConnectGame("tictacmo", rows=3, cols=5, k=3, num_players=3, gravity=False),
    "connect4": lambda: ConnectGame("connect4", rows=6, cols=7, k=4, num_players=2, gravity=True),
    "connect3x3": lambda: ConnectGame("connect3x3", rows=6, cols=7, k=3, num_players=3, gravity=True),
    "pig": lambda players=2, goal=100: PigGame(players, goal),
    "kingdomino": lambda players=4, size=5, middle=0, harmony=0, fit=0: CompiledKingdomino(
        players, size, middle, harmony, fit
    ),
}
OPENSPIEL_PREFIX = "openspiel:"
_CHECKED: set[str] = set()  # plugin games this process has checked (`contract.py`)

GAME_NAMES = tuple(_GAMES)
_SPEC = re.compile(r"^\s*(\w+)\s*(?:\((.*)\))?\s*$")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def make_game(spec: str) -> Game:
    """The game a spec names; a bad spec raises ValueError with one line saying what was expected."""
    if spec.startswith(OPENSPIEL_PREFIX):
        from pipeline.games.openspiel import OpenSpielGame

        return OpenSpielGame(spec[len(OPENSPIEL_PREFIX) :])
    match = _SPEC.match(spec)
    plugin = plugin_parts(spec)
    if plugin is None and match is not None and match.group(1) not in _GAMES:
        if (entry := registered_games().get(match.group(1))) is not None:  # an installed package's game
            module, _, cls = entry.partition(":")
            plugin = (module.strip(), cls.strip(), match.group(2))
    if plugin is not None:
        module, cls, text = plugin
        game = named_plugin(spec, _built(spec, cls, plugin_class(spec, module, cls), _options(spec, text), plugin=True))
        if game.name not in _CHECKED:  # once a process: a few random games, about a second at most
            check_contract(game)
            _CHECKED.add(game.name)
        return game
    if match is None or match.group(1) not in _GAMES:
        expected = ", ".join([*GAME_NAMES, *registered_games()])
        raise ValueError(
            f"unknown game {quoted(spec)}; expected one of {expected}, openspiel:<game>, or module.path:ClassName"
        )
    name = match.group(1)
    return _built(spec, name, _GAMES[name], _options(spec, match.group(2)))


def _built(spec: str, name: str, factory, options: dict[str, int], plugin: bool = False) -> Game:
    """`factory(**options)`, an option it does not take refused in one line naming those it does; what a
    plugin's own constructor raises is one line too."""
    allowed = [p for p in inspect.signature(factory).parameters if p not in ("args", "kwargs")]
    if unknown := [key for key in options if key not in allowed]:
        takes = f"options {', '.join(allowed)}" if allowed else "no options"
        raise ValueError(f"game {quoted(spec)}: unknown option {unknown[0]!r}; {name} takes {takes}")
    if not plugin:
        return factory(**options)
    try:
        return factory(**options)
    except Exception as err:
        raise GameFault(f"game {quoted(spec)}: {name}() raised {type(err).__name__}: {clip(str(err), 120)}") from None


def _options(spec: str, text: str | None) -> dict[str, int]:
    options: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, _, value = item.partition("=")
        if not _INTEGER.fullmatch(value):  # int() would read '٣' as 3
            raise ValueError(f"game {quoted(spec)}: option {quoted(item)} must be name=integer")
        options[key.strip()] = int(value)
    return options


__all__ = ["GAME_NAMES", "OPENSPIEL_PREFIX", "Game", "GameFault", "IllegalMove", "Symmetry", "make_game"]
