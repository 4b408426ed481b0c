"""Games from outside the package (`pipeline/games/plugins.py`): a `module:Class(options)` spec and an
installed package's entry point give a game used as a built-in one, here in params and in a match whose
games are played by worker processes; a bad spec is one line. A game brings its own players and
experiments by reference (`games/base.py`'s `BringsPlayers`, `BringsExperiments`), as the built-in ones do."""

import textwrap

import pytest

from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game

RULES = '''
from alphazero_games.connect.rules import ConnectGame


class FourInARow(ConnectGame):
    """Connect-4's rules on a board of any size."""

    def __init__(self, rows=5, cols=6):
        super().__init__("four", rows=rows, cols=cols, k=4, num_players=2, gravity=True)


class LeftmostFour(FourInARow):
    """A game that brings its own `solver` player (one that drops in the leftmost open column), and two
    references that do not resolve."""

    def players(self):
        return {"solver": "my_rules:leftmost", "alphabeta": "my_rules:no_such_player"}

    def experiments(self):
        return ("my_rules:leftmost",)


def leftmost(game, spec):
    from pipeline.agents.base import PositionAgent

    class Leftmost(PositionAgent):
        def choose(self, state, rng):
            return int(game.legal_mask(state).argmax())

    return Leftmost(game, spec.name)


class NotAGame:
    def __init__(self):
        self.num_players = 2


class OldMargins(FourInARow):
    """Margins with the scale as an attribute, as games wrote it before `HasMargins.margin_scale()`."""

    margin_scale = 4.0

    def margins(self, state):
        return [0.0, 0.0]
'''


@pytest.fixture
def rules(tmp_path, monkeypatch):
    """A module of rules in a folder of the user's, outside the package, on Python's path."""
    (tmp_path / "my_rules.py").write_text(textwrap.dedent(RULES))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_module_class_spec_is_a_game_named_by_its_spec(rules):
    game = make_game("my_rules:FourInARow(rows=4,cols=5)")
    assert game.name == "my_rules:FourInARow(rows=4,cols=5)" and game.observation_shape[1:] == (4, 5)
    again = make_game(game.name)  # as a worker or a checkpoint check rebuilds it
    assert type(again).__name__ == "FourInARow" and again.num_actions == 5
    assert make_game("my_rules:FourInARow").num_actions == 6  # the class's defaults


def test_a_plugin_game_is_a_game_in_params_and_in_worker_processes(rules):
    from pipeline.agents.spec import AgentSpec
    from pipeline.matches.workers import play_match

    params = parse_params({"game": "my_rules:FourInARow(rows=4,cols=5)", "generations": [{"gen": 1, "prev": 0}]})
    players = [AgentSpec.uct("uct", simulations=20, c_uct=1.41, seed=0), AgentSpec("random", "random")]
    result = play_match(params.game, players, [[0, 1], [1, 0]] * 2, seed=0, parallel=1, workers=2)
    assert result.games == 4 and all(len(record.actions) >= 7 for record in result.records)


def test_an_installed_packages_entry_point_names_a_game(rules, monkeypatch):
    info = rules / "my_rules-1.0.dist-info"  # what `pip install` writes for a package's entry points
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[alphazero_pipeline.games]\nfour = my_rules:FourInARow\n")
    game = make_game("four(rows=6,cols=7)")
    assert game.name == "four(rows=6,cols=7)" and game.num_actions == 7
    with pytest.raises(ValueError, match="expected one of connect3x3, .*, tictactoe, four, openspiel"):
        make_game("five")


def test_a_packages_own_section_of_evaluate_is_read_as_the_project_games_are(rules):
    """A package registers the section of `params.evaluate` its experiment reads, as Connect-4 and Pig
    register theirs (`alphazero_pipeline.sections`): filled with its defaults, checked field by field."""
    section = "class LeftmostParams(Section):\n    enabled: bool = True\n    games: int = 4\n"
    (rules / "my_sections.py").write_text("from pipeline.config import Section\n\n\n" + section)
    info = rules / "my_rules-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[alphazero_pipeline.sections]\nleftmost = my_sections:LeftmostParams\n")
    base = {"game": "my_rules:LeftmostFour", "generations": [{"gen": 1, "prev": 0}]}
    assert parse_params(base).evaluate.leftmost.games == 4
    assert parse_params({**base, "evaluate": {"leftmost": {"games": 9}}}).evaluate.leftmost.games == 9
    assert parse_params(base).evaluate.pig_oracle.hold_at == 20  # the project's own, beside it
    with pytest.raises(ConfigError, match=r"^params.yaml: evaluate.leftmost.gmaes: unknown key \(misspelt\?\)$"):
        parse_params({**base, "evaluate": {"leftmost": {"gmaes": 9}}})
    with pytest.raises(ConfigError, match=r"^params.yaml: evaluate.leftmots: unknown key \(misspelt\?\)$"):
        parse_params({**base, "evaluate": {"leftmots": {}}})


@pytest.mark.parametrize(
    ("spec", "line"),
    [
        ("no_such_module:Game", "game 'no_such_module:Game': cannot import no_such_module (No module named"),
        ("my_rules:Missing", "game 'my_rules:Missing': module my_rules has no class Missing"),
        ("my_rules:NotAGame", "game 'my_rules:NotAGame': NotAGame is not a Game: it lacks initial_state, legal_mask"),
        ("my_rules:FourInARow(depth=3)", "unknown option 'depth'; FourInARow takes options rows, cols"),
        ("my_rules:FourInARow(rows=x)", "option 'rows=x' must be name=integer"),
        ("my_rules:OldMargins", "OldMargins: HasMargins (pipeline/games/base.py) is margins() and margin_scale(), as"),
    ],
)
def test_a_bad_plugin_spec_is_one_line(rules, spec, line):
    with pytest.raises(ValueError) as refused:
        make_game(spec)
    assert line in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ConfigError, match="^params.yaml: game '"):  # said once: not "game: game"
        parse_params({"game": spec, "generations": [{"gen": 1, "prev": 0}]})


def test_a_plugin_game_brings_its_own_player_to_worker_processes(rules):
    from pipeline.agents.spec import AgentSpec
    from pipeline.matches.workers import play_match

    players = [AgentSpec("solver", "solver"), AgentSpec("random", "random")]
    result = play_match("my_rules:LeftmostFour", players, [[0, 1], [1, 0]], seed=0, parallel=1, workers=2)
    first_moves = {record.actions[seating.index(0)] for record, seating in zip(result.records, [[0, 1], [1, 0]])}
    assert result.games == 2 and first_moves == {0}  # the game's own player moved, leftmost


@pytest.mark.parametrize(
    ("game", "kind", "line"),
    [
        (
            "pig",
            "solver",
            "pig(players=2,goal=100) brings no solver player (its own players: optimal, hold)",
        ),
        ("kingdomino", "alphabeta", "brings no alphabeta player (its own players: none)"),
        (
            "my_rules:LeftmostFour",
            "alphabeta",
            "LeftmostFour's alphabeta player: module my_rules has no no_such_player",
        ),
    ],
)
def test_a_player_the_game_does_not_bring_is_one_line(rules, game, kind, line):
    from pipeline.agents.spec import AgentSpec

    with pytest.raises(ValueError) as refused:
        AgentSpec("s", kind).build(make_game(game))
    assert line in str(refused.value) and "\n" not in str(refused.value)


def test_an_experiment_that_is_not_one_is_one_line(rules):
    from pipeline.experiments import experiments_for

    with pytest.raises(
        ValueError, match="^my_rules:LeftmostFour's experiments: <function leftmost .* is not an Experiment"
    ):
        experiments_for(make_game("my_rules:LeftmostFour"))
