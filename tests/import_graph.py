"""The project's own import graph, read from the source with `ast` (imports inside functions too): what
the layout and dvc.yaml tests check against."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "stages", "alphazero_games")


def module_file(name: str) -> Path | None:
    """`pipeline.search.mcts` -> its file (a package's `__init__.py`); None outside the project."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


@cache
def import_lines(path: Path) -> dict[Path, int]:
    """The project files `path` imports, wherever in it the import stands, each with the line of its
    first import."""
    found: dict[Path, int] = {}
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]  # a name may be a submodule
        else:
            continue
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b first
                file = module_file(".".join(parts[:i]))
                if file is not None and file != path:
                    found[file] = min(found.get(file, node.lineno), node.lineno)
    return found


def imports_of(path: Path) -> frozenset[Path]:
    """The project files `path` imports, wherever in it the import stands, and those it loads by the
    references the project's games give (pyproject.toml's entry points, which `make_game` builds from;
    `games/base.py`'s `players_of`, `experiments_of`): what it runs, as dvc.yaml's deps must know,
    though the layout's floors do not count them as imports."""
    return frozenset(import_lines(path)) | referenced_by(path)


def referenced_by(path: Path) -> frozenset[Path]:
    if path.is_relative_to(ROOT / "alphazero_games"):  # where the references are given, not loaded
        return frozenset()
    source = path.read_text()
    asked = [asks for asks in game_references() if re.search(rf"(?<!def )\b{asks}\(", source)]  # a call, not its def
    return frozenset(file for asks in asked for file in game_references()[asks])


@cache
def game_references() -> dict[str, frozenset[Path]]:
    """`make_game`, `players_of` and `experiments_of` -> the files of the modules the project's games name
    for them."""
    from pipeline.games import game_names, make_game
    from pipeline.games.base import experiments_of, players_of
    from pipeline.games.plugins import registered_games

    games = [make_game(name) for name in game_names() if registered_games()[name].shipped]
    references = {
        "make_game": [f"{entry.module}:{entry.attribute}" for entry in registered_games().values() if entry.shipped],
        "players_of": [r for game in games for r in players_of(game).values()],
        "experiments_of": [r for game in games for r in experiments_of(game)],
    }
    return {asks: frozenset(module_file(r.partition(":")[0]) for r in refs) for asks, refs in references.items()}


def closure(start: Path) -> set[Path]:
    seen, todo = set(), [start]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(imports_of(path))
    return seen


def project_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def find_cycle() -> list[Path] | None:
    """One import cycle among the project's modules, as the list of files around it, or None."""
    state: dict[Path, int] = {}  # 1: on the current path, 2: done
    path: list[Path] = []

    def visit(node: Path) -> list[Path] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(import_lines(node)):  # imports only: a reference is loaded when called
            if state.get(nxt) == 1 and not _package_of(nxt, node):
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for file in project_files():
        if file not in state and (cycle := visit(file)):
            return cycle
    return None


def _package_of(package: Path, module: Path) -> bool:
    """A module importing its own package's `__init__` (which imports it) is Python's normal case."""
    return package.name == "__init__.py" and module.is_relative_to(package.parent)
