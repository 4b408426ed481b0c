"""The house of floors (docs/architecture.md): each room on a floor, every import going down to a lower
floor, no cycle, the library importing neither the command lines nor a game's package. The rooms are read
from the package folders themselves, and their floors from docs/architecture.md's table, the one place
they are written."""

import ast
import re
from functools import cache
from pathlib import Path

from import_graph import ROOT, find_cycle, import_lines, project_files

LIBRARY = "pipeline"
GAMES_PACKAGE = "alphazero_games"  # the project's own games, above the library
COMMANDS = "pipeline/commands"
ENTRY_POINTS = ("pipeline/__main__.py",)  # besides the commands, the only importer of COMMANDS (never a stage)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def room(path: Path) -> str:
    """The room `path` lies in, read from the folders: in a package with subpackages (`pipeline`,
    `alphazero_games`) each subpackage is a room and each module beside them one of its own; a package
    without subpackages (`stages`) is one room."""
    parts = path.relative_to(ROOT).parts
    top = ROOT / parts[0]
    if len(parts) == 1 or not any((child / "__init__.py").exists() for child in top.iterdir() if child.is_dir()):
        return parts[0]
    return "/".join(parts[:2])


@cache
def floors() -> dict[str, int]:
    """Each room's floor, as docs/architecture.md's table writes it."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## The floors and their rooms") :]
    table = next(block for block in section.split("\n\n") if block.startswith("| floor |"))
    written = {}
    for row in table.splitlines()[2:]:
        floor, where = [cell.strip() for cell in row.strip("|").split("|")][:2]
        for path in re.findall(r"`([^`]+)`", where) if floor else []:  # `examples/`: params, no room
            written[path.rstrip("/")] = int(floor)
    return written


def imports() -> list[tuple[str, int, str]]:
    """(importer, line, imported) for every project import, as paths from the project root."""
    return [
        (relative(path), line, relative(target))
        for path in project_files()
        for target, line in sorted(import_lines(path).items())
    ]


def test_no_import_cycle():
    cycle = find_cycle()
    assert cycle is None, "import cycle: " + " -> ".join(relative(p) for p in cycle)


def test_every_room_has_a_floor_and_every_floor_a_room():
    rooms = {room(path) for path in project_files()}
    assert rooms == set(floors()), (
        f"rooms without a floor in docs/architecture.md: {sorted(rooms - set(floors()))}; "
        f"floors of no room: {sorted(set(floors()) - rooms)}"
    )


def test_every_import_goes_down():
    """A module imports from its own room and from rooms of lower floors only: not sideways, not up."""
    wrong = []
    for importer, line, imported in imports():
        here, there = room(ROOT / importer), room(ROOT / imported)
        if here != there and floors()[there] >= floors()[here]:
            direction = "a higher floor" if floors()[there] > floors()[here] else "sideways"
            wrong.append(
                f"{importer}:{line} (floor {floors()[here]}) imports {imported} (floor {floors()[there]}): {direction}"
            )
    assert not wrong, "imports against the floors:\n" + "\n".join(wrong)


def test_every_game_sits_above_the_library():
    """Each of the project's game families is a room above every room of the library it extends."""
    library = max(
        floor for where, floor in floors().items() if where.startswith(LIBRARY + "/") and where not in ENTRY_POINTS
    )
    games = {where: floor for where, floor in floors().items() if where.startswith(GAMES_PACKAGE + "/")}
    assert set(games) == {f"{GAMES_PACKAGE}/{name}" for name in ("connect", "pig", "kingdomino", "__init__.py")}
    assert all(floor > library for where, floor in games.items() if not where.endswith("__init__.py")), games


def string_constants(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in a module's code, its docstrings left out."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_the_library_never_imports_a_game_package():
    """Not by an import, and not through a string (an import_module, a `module:Name` reference): the
    library finds the project's games as it finds a user's, through the entry points."""
    wrong = [
        f"{importer}:{line} imports {imported}"
        for importer, line, imported in imports()
        if imported.startswith(GAMES_PACKAGE + "/") and not importer.startswith(GAMES_PACKAGE + "/")
    ]
    for path in project_files():
        if not relative(path).startswith(GAMES_PACKAGE + "/"):
            wrong += [
                f"{relative(path)}:{line} names {text!r}"
                for line, text in string_constants(path)
                if GAMES_PACKAGE in text
            ]
    assert not wrong, "the library reaches into a game's package:\n" + "\n".join(wrong)


def test_the_project_games_are_found_as_a_plugin_is():
    """Every name the registry knows comes from the one entry-point group a user's package registers in
    (pyproject.toml), the project's own games marked as shipped by this distribution."""
    import tomllib

    from pipeline.games import game_names
    from pipeline.games.plugins import ENTRY_POINT_GROUP, registered_games

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][ENTRY_POINT_GROUP]
    registered = registered_games()
    assert set(declared) <= set(registered) and set(declared) <= set(game_names())
    for name, reference in declared.items():
        module, _, attribute = reference.partition(":")
        assert registered[name] == (module, attribute, True)
        assert module.startswith(GAMES_PACKAGE + ".")


def test_nothing_in_the_library_imports_the_command_lines():
    wrong = [
        f"{importer}:{line} imports {imported}"
        for importer, line, imported in imports()
        if imported.startswith(COMMANDS + "/")
        and not importer.startswith((COMMANDS + "/", GAMES_PACKAGE + "/"))  # a game may bring a command
        and not any(importer == e or importer.startswith(e + "/") for e in ENTRY_POINTS)
    ]
    assert not wrong, "the library imports a command line:\n" + "\n".join(wrong)


def test_no_tracked_file_names_a_path_of_one_machine():
    """Results and docs a reader can use anywhere: no absolute path into the work, root or home folder of
    the machine that wrote them (archives aside: binary, read only after unpacking)."""
    import subprocess

    listed = subprocess.run(
        ["git", "grep", "-n", "-I", "-E", r"(^|[^\w.$])/(work|root|home)/", "--", ".", ":!*.tar.gz"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if listed.returncode > 1:  # not a git checkout (an unpacked archive): nothing to check
        return
    assert listed.stdout == "", f"machine paths:\n{listed.stdout[:2000]}"


def tracked_texts(*patterns: str) -> dict[str, str]:
    """Tracked text files (of `patterns`, or all) as they stand in the work tree, by path from the root;
    binaries and archives left out. Empty outside a git checkout (an unpacked archive)."""
    import subprocess

    listed = subprocess.run(["git", "ls-files", "-z", *patterns], cwd=ROOT, capture_output=True, text=True)
    texts = {}
    for name in listed.stdout.split("\0") if listed.returncode == 0 else []:
        if not name or name.endswith((".tar.gz", ".tgz", ".zip")):
            continue
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):  # deleted in the work tree, or binary
            continue
        if "\0" not in text:
            texts[name] = text
    return texts


STEP_NUMBER = re.compile(r"\bstops? ?-?\d+\b", re.IGNORECASE)


def test_no_tracked_file_names_a_step_number():
    """Results and docs are dated and name commits, not the work sessions' step numbers ("stop 47"),
    which nobody outside those sessions can place (issue 53)."""
    here = relative(Path(__file__))
    found = [
        f"{name}:{text.count(chr(10), 0, hit.start()) + 1}: {hit.group()}"
        for name, text in tracked_texts().items()
        if name != here
        for hit in STEP_NUMBER.finditer(text)
    ]
    assert not found, "step numbers (write the date and commit instead):\n" + "\n".join(found[:50])


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def without_code_blocks(text: str) -> str:
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def markdown_prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans, where `[a](b)` is not a link."""
    return re.sub(r"(`+)[^`]*?\1", "", without_code_blocks(text))


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a markdown file's headings: lower case, punctuation dropped, spaces to hyphens,
    a repeated heading numbered."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", without_code_blocks(text), flags=re.MULTILINE):
        slug = "".join(c if c.isalnum() or c in "-_" else "-" if c == " " else "" for c in heading.lower())
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def test_every_relative_markdown_link_resolves():
    """Every relative link of the tracked markdown files (README, NOTES, BENCHMARKS and its pages under
    docs/results/, ...) names a file or folder of the checkout, and its #anchor a heading of that file."""
    texts = tracked_texts("*.md")
    broken = []
    for name, text in texts.items():
        for target in LINK.findall(markdown_prose(text)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.IGNORECASE):  # https:, mailto:, ...
                continue
            path, _, anchor = target.partition("#")
            resolved = (ROOT / name).parent / path if path else ROOT / name
            if not resolved.exists():
                broken.append(f"{name}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text(encoding="utf-8")):
                broken.append(f"{name}: {target} (no such heading)")
    assert texts, "no markdown file found"
    assert not broken, "broken links:\n" + "\n".join(broken)


GAMES = ROOT / GAMES_PACKAGE


def game_folders() -> dict[str, str]:
    """Each of the project's game's name and each class of its rules (games and states), by the package
    under alphazero_games/ that holds them: `{"connect4": "connect", "PigGame": "pig", ...}`."""
    from pipeline.games import game_names, make_game
    from pipeline.games.plugins import registered_games

    folders = {}
    for name in game_names():
        if registered_games()[name].shipped:
            folders[name] = type(make_game(name)).__module__.split(".")[1]
    for path in GAMES.glob("*/*.py"):
        for cls in re.findall(r"^class (\w+)(?!\(Protocol\))\b", path.read_text(), re.M):
            folders[cls] = path.parent.name
    return folders


def asks_for_a_game(text: str, folders: dict[str, str]) -> list[tuple[str, str]]:
    """(line, game or class) where a line compares a game's name with a built-in game's or tests a game's
    class; (line, "") where it reads a game's attribute by name with a default (where a game declares
    an ability with a protocol instead) or compares a name it reads with getattr."""
    names = "|".join(name for name in folders if name[0].islower())
    classes = "|".join(sorted(name for name in folders if name[0].isupper()))
    asking = [rf"\.name\s*[!=]=\s*[\"']({names})\b", rf"isinstance\([^,]+,\s*\(?({classes})\b"]
    anything = [r"getattr\(\w+,\s*\"name\"[^)]*\)\s*[!=]=", r"getattr\((self\.)?game,\s*\"\w+\","]
    found = []
    for line in text.splitlines():
        found += [(line.strip(), hit.group(1)) for p in asking if (hit := re.search(p, line))]
        found += [(line.strip(), "") for p in anything if re.search(p, line)]
    return found


def test_no_game_is_asked_for_by_name_or_class_outside_its_folder():
    """Search, nets, jobs, evaluation and the commands ask a game what it offers (`games/base.py`'s
    abilities), never which game it is; a game's own package (`alphazero_games/connect/`, ...) may name
    its own games and classes, and no other's."""
    folders = game_folders()
    wrong = []
    for path in project_files():
        name = relative(path)
        own = (
            path.relative_to(GAMES).parts[0]
            if path.is_relative_to(GAMES) and len(path.relative_to(GAMES).parts) > 1
            else None
        )
        for line, game in asks_for_a_game(path.read_text(), folders):
            if own is None or (game and folders[game] != own):
                wrong.append(f"{name}: {line}")
    assert not wrong, (
        "asks for a game by name or class outside its folder (declare an ability in games/base.py):\n"
        + "\n".join(wrong)
    )


def test_no_help_or_message_of_the_library_names_a_built_in_game():
    """The library's strings, help and error lines included, name no built-in game by its registered
    name: a list of games comes from the registry (`solve --help`), so a user's game is listed as the
    project's are. Docstrings may cite a game as an example, and papers by their titles (the Kingdomino
    notes), which are not game names."""
    names = [name for name, where in game_folders().items() if name[0].islower()]
    word = re.compile(rf"\b({'|'.join(names)})\b")
    wrong = [
        f"{relative(path)}:{line}: {text[:80]!r}"
        for path in project_files()
        if relative(path).startswith(("pipeline/", "stages/"))
        for line, text in string_constants(path)
        if word.search(text)
    ]
    assert not wrong, "names a built-in game (list the registry's instead):\n" + "\n".join(wrong)


def test_the_games_players_and_experiments_are_found():
    """Every reference a built-in game gives for its own players and experiments imports, so a typo in
    one is a failing test here, not an error in a worker halfway through an evaluation."""
    from pipeline.agents.spec import KINDS
    from pipeline.experiments import Experiment, experiments_for
    from pipeline.games import game_names, make_game
    from pipeline.games.base import players_of
    from pipeline.games.plugins import load_reference

    brought = set()
    for name in game_names():
        game = make_game(name)
        for kind, reference in players_of(game).items():
            assert kind not in KINDS and callable(load_reference(name, reference)), (name, kind)
            brought.add(kind)
        assert all(isinstance(e, Experiment) for e in experiments_for(game))
    assert brought == {"alphabeta", "solver", "optimal", "hold"}
    assert {e.name for e in experiments_for(make_game("connect4"))} >= {"alphabeta", "solver_games", "benchmark"}
    assert "pig_oracle" in {e.name for e in experiments_for(make_game("pig"))}
    assert "pig_oracle" not in {e.name for e in experiments_for(make_game("pig(players=3)"))}


def test_every_experiment_the_readme_names_is_one_it_creates():
    """A reader can run every `dvc exp diff/apply/branch` and `dvc plots diff` line of the README as written:
    each experiment they name is made by one of its own `dvc exp run -n NAME` lines."""
    text = (ROOT / "README.md").read_text()
    created = set(re.findall(r"dvc exp run [^\n`]*?-n (\S+)", text))
    named = set()
    for _verb, names in re.findall(r"dvc (exp (?:diff|apply|branch)|plots diff) ((?:[\w-]+ ?)+)", text):
        named |= {name for name in names.split() if not name.startswith("-") and not name.isupper()}  # NAME: a slot
    assert created and named, "the README's experiment lines moved: look for them again"
    assert named <= created, f"named but never created by the README: {sorted(named - created)}"
