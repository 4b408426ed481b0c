"""Game registry: `make_game(spec)` is the only way the rest of the project obtains a game.

A spec is a registered name with optional integer options, `pig(players=3,goal=50)`, `openspiel:`
followed by any OpenSpiel game string, `openspiel:backgammon`, or a class or factory from outside
(`plugins.py`): `mypkg.rules:MyGame(size=4)`. Every name is registered the same way, in the entry-point
group `alphazero_pipeline.games`: the project's own games (`alphazero_games`, in pyproject.toml) as a
user's package registers its own, as Gymnasium's built-in environments register as third-party ones
do. A game's `name` is its full spec, so a worker process or a checkpoint check rebuilds exactly the
same game from it.
"""

from __future__ import annotations

import inspect
import re

from pipeline.games.base import Game, IllegalMove, Symmetry
from pipeline.games.contract import GameFault, check_contract
from pipeline.games.guard import guard
from pipeline.games.plugins import named_plugin, plugin_class, plugin_parts, registered_games
from pipeline.plumbing.clip import clip, quoted

OPENSPIEL_PREFIX = "openspiel:"
_CHECKED: set[str] = set()  # plugin games this process has checked (`contract.py`)

_SPEC = re.compile(r"^\s*(\w+)\s*(?:\((.*)\))?\s*$")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")


def game_names() -> tuple[str, ...]:
    """Every registered game's name, the project's own first."""
    registered = registered_games()
    return tuple(sorted(registered, key=lambda name: not registered[name].shipped))


def make_game(spec: str) -> Game:
    """The game a spec names; a bad spec raises ValueError with one line saying what was expected."""
    if spec.startswith(OPENSPIEL_PREFIX):
        from pipeline.games.openspiel import OpenSpielGame

        return OpenSpielGame(spec[len(OPENSPIEL_PREFIX) :])
    match = _SPEC.match(spec)
    plugin = plugin_parts(spec)
    shipped = False
    if plugin is None and match is not None and (entry := registered_games().get(match.group(1))) is not None:
        plugin, shipped = (entry.module, entry.attribute, match.group(2)), entry.shipped
    if plugin is None:
        expected = ", ".join(game_names())
        if not any(entry.shipped for entry in registered_games().values()):
            expected = "a registered game (none of this project's: install it, pip install -e .)"
        raise ValueError(
            f"unknown game {quoted(spec)}; expected one of {expected}, openspiel:<game>, or module.path:ClassName"
        )
    module, name, text = plugin
    game = _built(spec, name, plugin_class(spec, module, name), _options(spec, text), shipped)
    if shipped:  # the project's own games name themselves in full (`pig(players=2,goal=100)`), tested
        return game
    game = named_plugin(spec, game)
    if game.name not in _CHECKED:  # once a process: a few random games, about a second at most
        check_contract(game)
        _CHECKED.add(game.name)
    return guard(game)


def _built(spec: str, name: str, factory, options: dict[str, int], shipped: bool) -> Game:
    """`factory(**options)`, an option it does not take refused in one line naming those it does; what
    a plugin's own constructor raises is one line too (the project's own games raise ValueError)."""
    allowed = [p for p in inspect.signature(factory).parameters if p not in ("args", "kwargs")]
    if unknown := [key for key in options if key not in allowed]:
        takes = f"options {', '.join(allowed)}" if allowed else "no options"
        raise ValueError(f"game {quoted(spec)}: unknown option {unknown[0]!r}; {name} takes {takes}")
    if shipped:
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


__all__ = ["OPENSPIEL_PREFIX", "Game", "GameFault", "IllegalMove", "Symmetry", "game_names", "make_game"]
