"""Matches between agents: seatings, scoring, reproducibility, workers, and real strength differences."""

import numpy as np
import pytest

from pipeline.agents.base import RandomAgent
from pipeline.agents.search_agent import PlayConfig, uct_agent
from pipeline.agents.spec import AgentSpec
from pipeline.games import make_game
from pipeline.matches.arena import (
    GameRecord,
    difference_interval,
    mean_score,
    mixed_seatings,
    pairwise_score,
    play_games,
    seat_permutations,
)
from pipeline.matches.workers import play_match
from pipeline.search import SearchConfig


def test_mixed_seatings_cover_every_assignment_with_both_players():
    seatings = mixed_seatings(3)
    assert len(seatings) == 6 and all(set(s) == {0, 1} for s in seatings)
    assert mixed_seatings(2) == [[0, 1], [1, 0]]
    assert seat_permutations([0, 1, 1]) == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]


def test_pairwise_score_counts_ties_as_half():
    records = [
        GameRecord(["new", "old", "old"], scores=np.array([1.0, -1.0, -1.0])),
        GameRecord(["old", "new", "new"], scores=np.array([0.0, 0.0, 0.0])),
    ]
    # game 1: new beats both olds (2 pairs); game 2: two ties (2 pairs, half each)
    assert pairwise_score(records, "new", "old") == 3 / 4
    assert mean_score(records, "new") == 1 / 3


def test_score_difference_comes_with_an_interval_over_games():
    won = GameRecord(["az", "uct", "uct"], scores=np.array([1.0, -1.0, -1.0]))
    lost = GameRecord(["uct", "az", "uct"], scores=np.array([1.0, -1.0, -1.0]))
    difference, low, high = difference_interval([won, won, won, lost], "az", "uct")
    # per game: +2, +2, +2, -1 (-1 less the uct pair's mean of 0)
    games = [won] * 3 + [lost]
    assert difference == pytest.approx(1.25) == pytest.approx(mean_score(games, "az") - mean_score(games, "uct"))
    assert low < difference < high and high - difference == pytest.approx(1.96 * 1.5 / 2)
    assert difference_interval([won] * 5, "az", "uct") == (2.0, 2.0, 2.0), "no spread, no width"


def test_same_seed_gives_the_same_games():
    game = make_game("tictacmo")

    def games():
        agents = [uct_agent(game, 20, seed=4), RandomAgent(game)]
        seatings = [[agents[i] for i in s] for s in seat_permutations([0, 1, 1]) * 2]
        records, _ = play_games(game, seatings, seed=11, parallel=4)
        return [r.actions for r in records]

    assert games() == games()


def test_uct_with_rollouts_beats_random_play():
    game = make_game("tictactoe")
    agents = [uct_agent(game, 200, seed=0), RandomAgent(game)]
    seatings = [[agents[i] for i in s] for s in seat_permutations([0, 1]) * 10]
    records, stats = play_games(game, seatings, seed=1, parallel=20)
    assert stats.games == 20
    assert mean_score(records, "uct200") > 0.6
    assert all(r.scores[r.seating.index("uct200")] >= 0 for r in records)  # never loses


def test_worker_processes_play_the_same_games_every_time():
    specs = [
        AgentSpec("uct", "uct", PlayConfig(simulations=16), SearchConfig(), seed=3),
        AgentSpec("random", "random"),
    ]
    seatings = seat_permutations([0, 1, 1]) * 4

    def games(workers):
        result = play_match("tictacmo", specs, seatings, seed=5, parallel=3, workers=workers)
        assert [r.seating for r in result.records] == [[specs[i].name for i in s] for s in seatings]
        assert result.simulations["uct"] > 0
        return [r.actions for r in result.records]

    two = games(2)
    assert two == games(2)
    assert len(games(1)) == len(two)


def test_match_command_compares_two_checkpoints(tmp_path, capsys):
    import json

    import torch
    import yaml

    from pipeline.commands.match import main
    from pipeline.nets.checkpoint import save_checkpoint
    from pipeline.nets.senet import NetworkShape, SENet

    game = make_game("tictactoe")
    paths = []
    for seed in (0, 1):
        torch.manual_seed(seed)
        path = tmp_path / f"net{seed}.ckpt"
        save_checkpoint(path, SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
        paths.append(str(path))
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"game": "tictactoe", "workers": 1, "generations": [{"gen": 1, "prev": 0}]}))
    main([*paths, "--games-per-seating", "3", "--simulations", "4", "--params", str(params), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 6
    assert result["ci95_low"] <= result["score"] <= result["ci95_high"]
    assert 0.0 <= result["score"] <= 1.0
    main([paths[0], "uct:4", "--games-per-seating", "2", "--simulations", "4", "--params", str(params), "--json"])
    assert json.loads(capsys.readouterr().out)["games"] == 4
    with pytest.raises(SystemExit) as exit:
        main([paths[0], "optimal", "--params", str(params)])
    err = capsys.readouterr().err
    assert exit.value.code == 1 and len(err.splitlines()) == 1
    expected = "expected uct:N, mce:N, greedy or random (tictactoe brings no players of its own)"
    assert err == f"error: unknown player 'optimal'; {expected}\n", "the game is the file's, read before torch"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["uct:0"], "error: uct:0: neither a checkpoint file nor a baseline; expected uct:N"),
        (["alphabeta:x"], "error: alphabeta:x: neither a checkpoint file nor a baseline"),
        (["uct:4", "--games-per-seating", "0"], "error: --games-per-seating: expected a positive integer, got 0"),
        (["uct:4", "--simulations", "-1"], "error: --simulations: expected a positive integer, got -1"),
    ],
)
def test_match_command_refuses_bad_opponents_and_budgets_in_one_line(tmp_path, capsys, argv, message):
    import yaml

    from pipeline.commands.match import main
    from pipeline.nets.checkpoint import save_checkpoint
    from pipeline.nets.senet import NetworkShape, SENet

    game = make_game("tictactoe")
    save_checkpoint(tmp_path / "net.ckpt", SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"game": "tictactoe", "workers": 1, "generations": [{"gen": 1, "prev": 0}]}))
    with pytest.raises(SystemExit) as exit:
        main([str(tmp_path / "net.ckpt"), *argv, "--params", str(params)])
    out, err = capsys.readouterr()
    assert exit.value.code == 1 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(message)


def test_match_first_alone_seats_the_champion_once_in_every_order(tmp_path, capsys):
    """Petosa & Balch's setting: the shipped Tic-Tac-Mo champion against two UCT players, each seat order."""
    import json

    import yaml

    from pipeline.commands.match import main

    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"game": "tictacmo", "workers": 1, "generations": [{"gen": 1, "prev": 0}]}))
    main(
        [
            "tictacmo",
            "uct:8",
            "--first-alone",
            "--games-per-seating",
            "2",
            "--simulations",
            "4",
            "--params",
            str(params),
            "--json",
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 6, "three seats for the champion, two games each"
    assert result["wins"] + result["ties"] + result["losses"] == 6


def test_second_params_give_b_its_own_search_and_params_of_another_game_are_refused(tmp_path, capsys):
    """Chen et al.'s yardstick as a command: one network, A searching one way and B another."""
    import json

    import torch
    import yaml

    from pipeline.commands.match import main
    from pipeline.nets.checkpoint import save_checkpoint
    from pipeline.nets.senet import NetworkShape, SENet

    game = make_game("tictactoe")
    torch.manual_seed(0)
    net = str(tmp_path / "net.ckpt")
    save_checkpoint(net, SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    base = {"game": "tictactoe", "workers": 1, "generations": [{"gen": 1, "prev": 0}]}
    files = {}
    for name, data in {
        "a": base,
        "b": {**base, "search": {"c_puct": 0.05}},
        "other": {**base, "game": "tictacmo"},
    }.items():
        files[name] = tmp_path / f"{name}.yaml"
        files[name].write_text(yaml.safe_dump(data))
    argv = [net, net, "--games-per-seating", "8", "--simulations", "16", "--params", str(files["a"]), "--json"]
    main(argv)
    alike = json.loads(capsys.readouterr().out)
    main([*argv, "--second-params", str(files["a"])])
    assert json.loads(capsys.readouterr().out) == alike, "the same settings by either way play the same games"
    main([*argv, "--second-params", str(files["b"])])
    assert json.loads(capsys.readouterr().out)["score"] != alike["score"], "B searched with its own c_puct"
    for args, message in [
        ([net, "uct:4", "--second-params", str(files["b"])], "error: --second-params: B (uct:4) is a baseline"),
        ([*argv, "--second-params", str(files["other"])], f"error: --second-params: {files['other']} plays tictacmo"),
        ([net, net, "--params", str(files["other"])], f"error: --params: {files['other']} plays tictacmo"),
        (["random", "uct:2", "--game", "tictactoe", "--params", str(files["other"])], "error: --params: "),
    ]:
        with pytest.raises(SystemExit) as exit:
            main(args)
        err = capsys.readouterr().err
        assert exit.value.code == 1 and len(err.splitlines()) == 1 and err.startswith(message)


def test_match_between_two_baselines_takes_the_game_from_game(capsys):
    import json

    from pipeline.commands.match import main

    main(["uct:16", "random", "--game", "tictacmo", "--games-per-seating", "2", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert (result["first"], result["second"], result["games"]) == ("uct:16", "random", 12)  # 6 seatings x 2
    assert result["score"] > 0.5  # UCT beats random play (as test_uct_with_rollouts_beats_random_play)
    with pytest.raises(SystemExit):
        main(["uct:16", "random"])
    assert capsys.readouterr().err == "error: uct:16: A is a baseline; give the game to play with --game\n"


def test_first_alone_counts_a_win_only_for_a_first_place():
    """With four seats and pairwise scores, beating two of three is a score above zero but no win."""
    import numpy as np

    from pipeline.commands.match import first_place_counts
    from pipeline.matches.arena import GameRecord

    second = GameRecord(seating=["first", "b", "b", "b"], scores=np.array([1 / 3, 1.0, -1 / 3, -1.0]))
    won = GameRecord(seating=["b", "first", "b", "b"], scores=np.array([-1 / 3, 1.0, 1 / 3, -1.0]))
    shared = GameRecord(seating=["b", "first"], scores=np.array([0.0, 0.0]))
    counts = first_place_counts([second, won, shared], "first")
    assert counts == {"wins": 1, "ties": 1, "losses": 1, "ahead_of_half": 2}


def test_score_interval_is_wilsons_and_lies_inside_zero_to_one():
    """Per-game scores are shares in [0, 1]: the interval never leaves that range, as the normal one did."""
    from pipeline.matches.arena import score_interval

    won = GameRecord(["az", "uct"], scores=np.array([1.0, -1.0]))
    lost = GameRecord(["uct", "az"], scores=np.array([1.0, -1.0]))
    tied = GameRecord(["az", "uct"], scores=np.array([0.0, 0.0]))
    split = score_interval([won, lost], "az", "uct")
    assert (split["score"], split["games"]) == (0.5, 2)
    assert (split["ci95_low"], split["ci95_high"]) == pytest.approx((0.0945, 0.9055), abs=1e-4), "not -0.48..1.48"
    eight_of_ten = score_interval([won] * 8 + [lost] * 2, "az", "uct")
    assert (eight_of_ten["ci95_low"], eight_of_ten["ci95_high"]) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    all_won = score_interval([won] * 5, "az", "uct")
    assert all_won["ci95_low"] == pytest.approx(5 / (5 + 1.96**2)) and all_won["ci95_high"] == 1.0, "a width still"
    assert score_interval([lost] * 5, "az", "uct")["ci95_low"] == 0.0
    ties = score_interval([tied] * 10, "az", "uct")
    assert ties["score"] == 0.5 and 0.0 < ties["ci95_low"] < 0.5 < ties["ci95_high"] < 1.0
    for games in ([won, lost], [won] * 7 + [lost], [lost] * 100, [won] * 1000):
        figures = score_interval(games, "az", "uct")
        assert 0.0 <= figures["ci95_low"] <= figures["score"] <= figures["ci95_high"] <= 1.0
    one = score_interval([won], "az", "uct")
    assert one["score"] == 1.0 and np.isnan(one["ci95_low"]) and np.isnan(one["ci95_high"])


def test_match_of_one_game_per_seating_gives_bounds_inside_zero_to_one(capsys):
    import json

    from pipeline.commands.match import main

    main(["random", "random", "--game", "tictactoe", "--games-per-seating", "1", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 2 and 0.0 <= result["ci95_low"] <= result["score"] <= result["ci95_high"] <= 1.0


def test_match_prints_a_line_a_person_reads_and_with_json_valid_json(capsys):
    """The readable line by default; `--json` for scripts: valid JSON (no NaN), scores to 4 decimals."""
    import json

    from pipeline.commands.match import main

    main(["uct:16", "random", "--game", "tictacmo", "--games-per-seating", "2", "--first-alone"])
    line = capsys.readouterr().out.strip()
    assert line.startswith("uct:16 against random on tictacmo: pairwise score ") and "over 6 games" in line
    assert "95% interval" in line and "alone at the table: wins " in line and "\n" not in line
    main(["random", "random", "--game", "tictacmo", "--games-per-seating", "1", "--seed", "3", "--json"])
    result = json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert all(len(repr(v).split(".")[-1]) <= 4 for v in result.values() if isinstance(v, float))
