"""Games from outside the package, used like the built-in ones everywhere a game spec is read
(params.yaml, `play`, `match`, `analyse`, `bench`, sweeps, workers and Ray tasks):

- `module.path:ClassName` or `module.path:ClassName(size=4)`: the class (or a function that returns a
  game) is imported from the module (found on Python's path: the project folder a stage runs in, or an
  installed package) and built with the options as integer keyword arguments, as Gymnasium's
  `entry_point="pkg.module:Class"` names one;
- a name an installed package registers in the entry-point group `alphazero_pipeline.games`
  (`[project.entry-points."alphazero_pipeline.games"] mygame = "mypkg.rules:MyGame"`), then written as
  `mygame` or `mygame(size=4)`. The project's own games (`alphazero_games`) are registered so too.

A plugin game's `name` is set to its spec, so a worker process, a checkpoint check or a Ray task
rebuilds exactly the same game from it. A bad spec is one line: the module, the class or what the
class lacks of the `Game` contract (`base.py`).
"""

from __future__ import annotations

import importlib
import inspect
import re
from importlib.metadata import entry_points
from typing import NamedTuple

from pipeline.games.base import Game, half_an_ability
from pipeline.games.contract import GameFault
from pipeline.plumbing.clip import clip, quoted

ENTRY_POINT_GROUP = "alphazero_pipeline.games"
DISTRIBUTION = "alphazero-pipeline"  # this project: the games it ships are tested by its suite
_PLUGIN = re.compile(r"^\s*([A-Za-z_][\w.]*):([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$")
# What a class must have to be a game: the contract's methods (checked on the class) and its sizes
# (checked on the game built, since most games set them in __init__).
METHODS = tuple(name for name, value in vars(Game).items() if callable(value) and not name.startswith("_"))
SIZES = tuple(name for name in Game.__annotations__ if name != "name")


def plugin_parts(spec: str) -> tuple[str, str, str | None] | None:
    """(module, class, options text) of a `module:Class(options)` spec; None for any other spec."""
    match = _PLUGIN.match(spec)
    return None if match is None else (match.group(1), match.group(2), match.group(3))


class Registered(NamedTuple):
    """A registered game: where it is built from, and whether this project ships it."""

    module: str
    attribute: str
    shipped: bool


def registered_games() -> dict[str, Registered]:
    """Installed packages' games, this project's own included: entry-point name -> where it is built
    from. Read afresh at each call (about 3 ms), so a package installed while a notebook runs is found."""
    found = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        module, _, attribute = point.value.partition(":")
        shipped = point.dist is not None and point.dist.name.replace("_", "-").lower() == DISTRIBUTION
        found.setdefault(point.name, Registered(module.strip(), attribute.strip(), shipped))
    return found


def plugin_class(spec: str, module_name: str, class_name: str):
    """The class (or game factory) `module_name.class_name`, refused in one line unless a class has the
    contract's methods (a factory's game is checked by `named_plugin`)."""
    cls = getattr(_module(f"game {quoted(spec)}", module_name), class_name, None)
    if inspect.isfunction(cls):
        return cls
    if not inspect.isclass(cls):
        raise ValueError(f"game {quoted(spec)}: module {module_name} has no class {class_name}")
    refuse_lacking(spec, class_name, [m for m in METHODS if not callable(getattr(cls, m, None))])
    return cls


def refuse_lacking(spec: str, name: str, missing: list[str]) -> None:
    """One line naming what of the contract a plugin's class or game lacks, if anything."""
    if missing:
        raise ValueError(f"game {quoted(spec)}: {name} is not a Game: it lacks {', '.join(missing)}")


def load_reference(owner: str, reference: str):
    """What `module.path:Name` names (a game's player factory or experiment: `base.py`'s `BringsPlayers`,
    `BringsExperiments`), refused in one line that starts with `owner`."""
    module_name, colon, name = (part.strip() for part in reference.partition(":"))
    if not (colon and module_name and name):
        raise ValueError(f"{owner}: {quoted(reference)} is not module.path:Name")
    found = getattr(_module(owner, module_name), name, None)
    if found is None:
        raise ValueError(f"{owner}: module {module_name} has no {name}")
    return found


def _module(owner: str, module_name: str):
    try:
        return importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"{owner}: cannot import {module_name} ({err})") from None
    except Exception as err:  # the module's own code (RuntimeError, SyntaxError, ...): the game's fault
        raised = f"{type(err).__name__}: {clip(str(err), 120)}"
        raise GameFault(f"{owner}: importing {module_name} raised {raised}") from None


def named_plugin(spec: str, game) -> Game:
    """A plugin's game, refused in one line unless it has the contract's methods and sizes, named `spec`."""
    name = type(game).__name__
    refuse_lacking(spec, name, [m for m in METHODS if not callable(getattr(game, m, None))])
    refuse_lacking(spec, name, [size for size in SIZES if not hasattr(game, size)])
    if half := half_an_ability(game):
        raise ValueError(f"game {quoted(spec)}: {type(game).__name__}: {half}")
    game.name = spec.strip()
    return game
