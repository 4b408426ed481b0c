"""Evaluation experiments on tiny budgets: results come back per experiment, finished matches come
from the cache (an interrupted or extended evaluation replays none), ratings cover every generation."""

import torch

from alphazero_games.connect.positions import CONNECT4
from pipeline.config import parse_params
from pipeline.evaluation.evaluate import run_evaluation
from pipeline.games import make_game
from pipeline.nets.senet import NetworkShape, SENet

DATA = CONNECT4


def networks(game, count, same_as_previous=()):
    nets = []
    for generation in range(count):
        if generation in same_as_previous:
            nets.append(nets[-1])
            continue
        torch.manual_seed(generation)
        nets.append(SENet(NetworkShape.for_game(game, 1, 8, 2)).eval())
    return nets


def tiny_params(game, **evaluate):
    defaults = {
        "fig3": {"opponent_rollouts": [2, 4], "games_per_seating": 1},
        "ratings": {"games_per_seating": 1, "uct_baselines": [4]},
        "pig_oracle": {"games_per_seat": 3},
        "alphabeta": {"simulations": [2], "depths": [1, 2], "games_per_side": 1},
        "solver_games": {"simulations": [2], "games_per_side": 2},
        "benchmark": {"simulations": [0, 2], "positions_per_set": 2, "data_dir": str(DATA)},
    }
    return parse_params(
        {
            "game": game,
            "workers": 1,
            "search": {"simulations": 4},
            "evaluate": {**defaults, **evaluate},
            "generations": [{"gen": 1, "prev": 0}, {"gen": 2, "prev": 1}, {"gen": 3, "prev": 2}],
        }
    )


def test_tictactoe_ratings_fig3_and_the_cache(tmp_path):
    game = make_game("tictactoe")
    params = tiny_params("tictactoe")
    nets = networks(game, 4, same_as_previous=(2,))  # generation 2 promoted nothing
    first = run_evaluation(game, nets, params, tmp_path / "matches", progress=False).to_json()
    assert first["seconds"] > 0
    assert [row["opponent_rollouts"] for row in first["fig3a"]] == [2, 4]
    for row in first["fig3a"] + first["fig3b_control"]:
        assert row["ci95_low"] <= row["difference"] <= row["ci95_high"], "each level's difference has its interval"
    assert first["player_of_generation"] == {0: "gen0", 1: "gen1", 2: "gen1", 3: "gen3"}
    assert {row["name"] for row in first["ratings"]} == {"gen0", "gen1", "gen3", "uct4"}
    assert next(r for r in first["ratings"] if r["name"] == "gen0")["rating"] == 0.0
    by_generation = {row["generation"]: row for row in first["versus_first"]}
    assert by_generation[2]["player"] == "gen1"
    assert abs(sum(by_generation[3][k] for k in ("win", "draw", "loss")) - 1) < 1e-9
    assert "alphabeta" not in first and first["skipped"] == []  # Connect-4 tables do not apply

    again = run_evaluation(game, nets, params, tmp_path / "matches", progress=False).to_json()
    assert again["seconds"] == 0.0, "every match was cached: nothing is replayed"
    assert again["ratings"] == first["ratings"] and again["fig3a"] == first["fig3a"]

    longer = run_evaluation(
        game, [*nets, nets[-1]], tiny_params("tictactoe"), tmp_path / "matches", progress=False
    ).to_json()
    assert longer["player_of_generation"][4] == "gen3" and longer["seconds"] == 0.0


def test_two_player_pig_meets_its_oracles(tmp_path):
    game = make_game("pig(players=2,goal=12)")
    params = tiny_params(game.name, fig3={"enabled": False}, ratings={"enabled": False})
    result = run_evaluation(game, networks(game, 1), params, tmp_path, progress=False).to_json()
    rows = {row["opponent"]: row for row in result["pig_oracle"]}
    assert set(rows) == {"optimal", "hold_at_20"}
    assert all(row["games"] == 6 and 0 <= row["score"] <= 1 for row in rows.values())
    exact = {row["opponent"]: row for row in result["pig_oracle_policy_exact"]}
    assert set(exact) == set(rows)
    assert all(row["score"] == (row["moving_first"] + row["moving_second"]) / 2 for row in exact.values())


def test_connect4_tables_solver_games_and_benchmark(tmp_path):
    game = make_game("connect4")
    params = tiny_params("connect4", fig3={"enabled": False}, ratings={"enabled": False})
    result = run_evaluation(game, networks(game, 1), params, tmp_path, progress=False).to_json()
    table = result["alphabeta"]
    assert (table["simulations"], table["depths"]) == ([2], [1, 2])
    assert all(0 <= v <= 1 for side in ("first", "second", "both") for v in table[side][0])
    rows = result["solver_games"]
    assert [(r["champion"], r["games"]) for r in rows] == [("to move", 2), ("waiting", 2)]
    for row in rows:
        assert row["score"] <= row["perfect_play_score"] + 1e-9, "nobody beats the solver"
    sets = {row["set"] for row in result["benchmark"]}
    assert {"Test_L3_R1", "Test_L1_R2"} <= sets
    assert {row["chooser"] for row in result["benchmark"]} == {"policy", "search 2"}
    assert result["skipped"] == []


def test_kingdomino_ratings_take_the_anchors_players_by_name(tmp_path):
    """`evaluate.ratings.baselines` seats any baseline of the player grammar; one a game cannot seat
    is one error naming the entry."""
    import pytest

    from pipeline.config import ConfigError

    game = make_game("kingdomino(players=2)")
    ratings = {"games_per_seating": 1, "uct_baselines": [], "baselines": ["greedy", "mce:2"], "previous": 0}
    params = tiny_params(game.name, fig3={"enabled": False}, ratings=ratings)
    result = run_evaluation(game, networks(game, 2), params, tmp_path / "matches", progress=False).to_json()
    assert {row["name"] for row in result["ratings"]} == {"gen0", "gen1", "greedy", "mce2"}
    tictactoe = make_game("tictactoe")
    params = tiny_params("tictactoe", fig3={"enabled": False}, ratings={**ratings, "baselines": ["random", "greedy"]})
    with pytest.raises(ConfigError, match=r"^evaluate.ratings.baselines\[1\]: game 'tictactoe' has no player-greedy"):
        run_evaluation(tictactoe, networks(tictactoe, 2), params, tmp_path / "ttt", progress=False)


def test_a_players_identity_which_seeds_its_matches_is_as_it_was():
    """`spec_identity` seeds an evaluation match's games: a player's is what it was when specs held a
    hold-at threshold (20 unless set) and an alpha-beta depth, so earlier runs draw the same games."""
    from pipeline.agents.spec import AgentSpec
    from pipeline.evaluation.evaluate import spec_identity

    uct = AgentSpec.uct("uct50", simulations=50, c_uct=1.41, seed=7)
    alphabeta = AgentSpec("alphabeta3", "alphabeta", number=3)
    for spec, held, depth in ((uct, "20", "0"), (alphabeta, "20", "3")):
        before = [spec.name, spec.kind, repr(spec.play), repr(spec.search), str(spec.seed), str(spec.epsilon)]
        assert spec_identity(spec) == "|".join([*before, held, depth])
