"""The one grammar of player names (`pipeline/agents/names.py`) and the specs it becomes: every command
reads `uct:200` the same way, and a kind nobody knows is refused in one line instead of playing as
a random player."""

import dataclasses

import pytest

from pipeline.agents.names import BASELINES, NETWORK, SEATS, PlayerName, baseline_spec, parse_player
from pipeline.agents.spec import AgentSpec
from pipeline.games import make_game


@pytest.mark.parametrize(
    ("text", "player"),
    [
        ("uct:200", PlayerName("uct", 200, "uct:200")),
        ("alphabeta:5", PlayerName("alphabeta", 5, "alphabeta:5")),
        ("hold:20", PlayerName("hold", 20, "hold:20")),
        (" random ", PlayerName("random", None, "random")),
        ("optimal", PlayerName("optimal", None, "optimal")),
        ("solver", PlayerName("solver", None, "solver")),
        ("mce:500", PlayerName("mce", 500, "mce:500")),
        ("greedy", PlayerName("greedy", None, "greedy")),
    ],
)
def test_baselines_are_read_with_their_number(text, player):
    assert parse_player(text, BASELINES) == player


def test_a_default_budget_stands_in_for_a_missing_one_of_uct_and_az_only():
    assert parse_player("az", SEATS, default_number=50) == PlayerName("az", 50, "az")
    assert parse_player("uct:7", SEATS, default_number=50).number == 7
    assert parse_player("human", SEATS, default_number=50) == PlayerName("human", None, "human")
    message = r"^'uct': expected uct:N, N the simulations, a positive integer, or a time a move such as uct:0.5s$"
    with pytest.raises(ValueError, match=message):
        parse_player("uct", BASELINES)
    assert parse_player("hold", (*BASELINES, "az"), default_number=50) == PlayerName("hold", None, "hold")


@pytest.mark.parametrize(
    ("text", "kinds", "message"),
    [
        (
            "Mini-Max",
            BASELINES,
            "unknown player 'Mini-Max'; expected uct:N, mce:N, greedy, random or a player the game brings (KIND",
        ),
        ("human", BASELINES, "unknown player 'human'; expected uct:N"),
        ("uct:0", BASELINES, "'uct:0': expected uct:N, N the simulations, a positive integer"),
        ("alphabeta:x", BASELINES, "'alphabeta:x': expected alphabeta:N, N a positive integer"),
        ("minimax", ("uct", "random"), "unknown player 'minimax'; expected uct:N or random"),
        ("random:3", SEATS, "'random:3': random takes no number"),
        ("no-such.ckpt", (*BASELINES, NETWORK), "unknown player 'no-such.ckpt'; expected uct:N, "),
    ],
)
def test_bad_names_are_one_line_naming_the_text(text, kinds, message):
    with pytest.raises(ValueError) as err:
        parse_player(text, kinds)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_network_is_a_checkpoint_file_or_a_shipped_champion(tmp_path):
    path = tmp_path / "net.ckpt"
    path.write_bytes(b"")
    assert parse_player(str(path), (*BASELINES, NETWORK)) == PlayerName(NETWORK, None, str(path))
    assert parse_player("tictacmo", (*BASELINES, NETWORK)).kind == NETWORK
    with pytest.raises(ValueError, match="unknown player"):
        parse_player(str(path), BASELINES)


def test_baselines_become_the_players_they_name():
    game = make_game("connect4")
    uct = baseline_spec(parse_player("uct:16", BASELINES), "opponent", c_uct=0.9, seed=3)
    assert (uct.kind, uct.play.simulations, uct.search.c_uct, uct.seed) == ("uct", 16, 0.9, 3)
    assert baseline_spec(parse_player("alphabeta:2", BASELINES), "ab", 1.41, 0).build(game).depth == 2
    assert baseline_spec(parse_player("hold:25", BASELINES), "h", 1.41, 0).number == 25
    assert baseline_spec(parse_player("optimal", BASELINES), "o", 1.41, 0).kind == "optimal"
    assert baseline_spec(parse_player("solver", BASELINES), "s", 1.41, 0).build(game).name == "s"


def test_an_unknown_kind_of_spec_is_refused_not_played_at_random():
    """A kind that is no name is refused where it is written; a name that is neither the library's nor
    one the game brings, when the game builds it: one line either way, never a random player."""
    with pytest.raises(ValueError) as err:
        AgentSpec("opponent", "Mini Max")
    assert str(err.value).startswith("opponent: unknown kind of player 'Mini Max'; expected one of alphazero, ")
    with pytest.raises(ValueError, match="^opponent: tictactoe brings no minimax player .its own players: none.$"):
        AgentSpec("opponent", "minimax").build(make_game("tictactoe"))
    spec = AgentSpec("opponent", "random")
    spec.kind = "rnadom"  # a kind changed after the spec was made
    with pytest.raises(ValueError, match="^opponent: tictactoe brings no rnadom player"):
        spec.build(make_game("tictactoe"))
    with pytest.raises(ValueError, match="unknown kind of player 'Mini Max'"):
        dataclasses.replace(spec, kind="Mini Max")


def test_a_games_own_player_needs_its_number_where_it_takes_one():
    for text, game in (("hold", "pig"), ("alphabeta", "connect4")):
        with pytest.raises(ValueError, match=f"^h: expected {text}:N, N the "):
            baseline_spec(parse_player(text, BASELINES), "h", 1.41, 0).build(make_game(game))


def test_greedy_and_mce_need_a_game_with_a_player_greedy_policy():
    for text in ("greedy", "mce:4"):
        spec = baseline_spec(parse_player(text, BASELINES), text, 1.4, 0)
        with pytest.raises(ValueError, match="^game 'tictactoe' has no player-greedy policy"):
            spec.build(make_game("tictactoe"))


@pytest.mark.parametrize(
    ("text", "seconds"), [("uct:0.5s", 0.5), ("mce:200ms", 0.2), ("az:2s", 2.0), ("uct:.25s", 0.25)]
)
def test_searching_kinds_move_by_time_when_their_number_is_a_time(text, seconds):
    kinds = (*BASELINES, *SEATS)
    assert parse_player(text, kinds) == PlayerName(text.partition(":")[0], None, text, seconds)


@pytest.mark.parametrize("text", ["uct:0s", "mce:-1s", "uct:1h", "hold:2s", "alphabeta:1s"])
def test_a_time_is_refused_where_it_is_zero_or_the_kind_takes_none(text):
    with pytest.raises(ValueError) as err:
        parse_player(text, BASELINES)
    assert "positive integer" in str(err.value) and "\n" not in str(err.value)
