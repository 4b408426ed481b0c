"""`python -m pipeline analyse` and `play` on tiny random networks: positions in each game's notation,
bad lines reported by number, a human game fed through standard input, and the MLflow champion."""

import io
import json

import numpy as np
import pytest
import torch
import yaml

from pipeline.commands import analyse, play
from pipeline.config import parse_params
from pipeline.games import make_game
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import NetworkShape, SENet


def tiny_checkpoint(path, spec):
    game = make_game(spec)
    torch.manual_seed(0)
    save_checkpoint(path, SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    return str(path)


def run(main, argv, text, monkeypatch, capsys):
    """Call a command with `text` as its standard input; return (exit status, stdout, stderr)."""
    monkeypatch.setattr("sys.stdin", text if isinstance(text, io.StringIO) else io.StringIO(text))
    try:
        main(argv)
        status = 0
    except SystemExit as exit:
        status = exit.code
    except KeyboardInterrupt:
        status = "KeyboardInterrupt escaped"
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("sims", [0, 8])
def test_connect4_lines_in_test_set_notation(tmp_path, monkeypatch, capsys, sims):
    checkpoint = tiny_checkpoint(tmp_path / "c4.ckpt", "connect4")
    lines = "32164625 11\n\n448x\n4444444\n6146 18\n"
    status, out, err = run(analyse.main, [checkpoint, "--simulations", str(sims), "--json"], lines, monkeypatch, capsys)
    assert status == 1  # some lines were bad
    assert err.splitlines() == [
        "error: line 3 (448x): move 8 is not legal here",
        "error: line 4 (4444444): move 4 is not legal here",
    ]
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["line"] for r in results] == [1, 2, 5]  # the lines after a bad one are analysed
    assert results[0]["moves"] == list("32164625") and results[1]["moves"] == []
    for result in results:
        assert result["simulations"] == sims and len(result["value"]) == 2
        assert list(result["policy"]) == [str(c) for c in range(1, 8)]
        assert sum(result["policy"].values()) == pytest.approx(1, abs=1e-5)
        assert result["policy"][result["move"]] == max(result["policy"].values())
    status, text, _ = run(analyse.main, [checkpoint, "--simulations", str(sims)], "6146\n", monkeypatch, capsys)
    assert status == 0 and text.startswith("6146  seat 0 to move  move ")


def test_the_old_budget_flag_still_works_with_a_deprecation_line(tmp_path, monkeypatch, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "mo.ckpt", "tictacmo")
    status, out, err = run(analyse.main, [checkpoint, "--sims", "8", "--json"], "1\n", monkeypatch, capsys)
    assert status == 0 and json.loads(out)["simulations"] == 8
    assert err == "python -m pipeline analyse: --sims is deprecated; use --simulations\n"


def test_tictacmo_moves_with_spaces_or_commas(tmp_path, monkeypatch, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "mo.ckpt", "tictacmo")
    lines = "1 2 3\n1,5\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n"
    status, out, err = run(analyse.main, [checkpoint, "--simulations", "8", "--json"], lines, monkeypatch, capsys)
    assert status == 1 and err.startswith("error: line 3 (") and "the game is over" in err
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["to_play"] == 0 and second["to_play"] == 2 and len(first["value"]) == 3
    assert "1" not in first["policy"] and len(first["policy"]) == 12  # legal moves only
    assert sum(first["policy"].values()) == pytest.approx(1, abs=1e-5)
    status, out, _ = run(analyse.main, [checkpoint, "--game", "tictacmo"], "1,5\n", monkeypatch, capsys)
    assert status == 0 and out.startswith("1,5  seat 2 to move  move ")


def test_an_error_line_cuts_a_long_input_line(tmp_path, monkeypatch, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "mo.ckpt", "tictacmo")
    huge = "1 " + "x" * 1_000_000
    status, out, err = run(analyse.main, [checkpoint], f"{huge}\n1,5\n", monkeypatch, capsys)
    assert status == 1 and out.startswith("1,5  seat 2 to move  move ")
    assert len(err.splitlines()) == 1 and len(err) < 300
    assert err.startswith(f"error: line 1 ({huge[:57]}...): ") and err.rstrip().endswith("...")


def test_dice_moves_are_refused_line_by_line(tmp_path, monkeypatch, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "pig.ckpt", "pig(goal=10)")
    status, out, err = run(analyse.main, [checkpoint], "roll\nhold\n", monkeypatch, capsys)
    assert status == 1 and "line 1 (roll)" in err and "decided by chance" in err
    assert out.startswith("hold  seat 1 to move  move ")


def test_kingdomino_positions_with_and_without_their_draws(tmp_path, monkeypatch, capsys):
    """A line may write a row's draw (`5-22-32-44`) at the start and after the pick that drew it;
    draws not written follow the game's fixed order; a draw that cannot be is one error line."""
    checkpoint = tiny_checkpoint(tmp_path / "kd.ckpt", "kingdomino")
    lines = [
        "",
        "1-2-3-4 p1 p2 p3 p4",  # the first row written; the round's last pick draws the next in the fixed order
        "1-2-3-4 p1 p2 p3 p4 9-10-11-12 e4r p1",  # ... or as written; seat 0 places domino 1, picks
        "1-2-3-4 p1 9-10-11-12",  # one pick does not end the round: no row was drawn
        "1-2-3-4-5 p1",
        "45-46-47-48 p1 p2 p3 p4 45-1-2-3",  # 45 left the deck with the first row
    ]
    argv = [checkpoint, "--simulations", "8", "--json"]
    status, out, err = run(analyse.main, argv, "\n".join(lines) + "\n", monkeypatch, capsys)
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["line"] for r in results] == [1, 2, 3]
    assert results[0]["moves"] == [] and results[0]["move"] in {"p1", "p2", "p3", "p4"}
    assert results[1]["moves"] == ["1-2-3-4", "p1", "p2", "p3", "p4"] and results[1]["to_play"] == 0
    assert {"e4r", "e6r"} <= set(results[1]["policy"])  # domino 1 (wheat) beside the castle
    assert results[2]["moves"][5] == "9-10-11-12" and results[2]["to_play"] == 1 and len(results[2]["value"]) == 4
    assert status == 1
    assert [e.split("): ")[1] for e in err.splitlines()] == [
        "draw '9-10-11-12': no row was just drawn here",
        "draw '1-2-3-4-5': a row is 4 different dominoes",
        "draw '45-1-2-3': domino 45 is not in the deck",
    ]


def test_a_human_plays_tictactoe_through_standard_input(tmp_path, monkeypatch, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "ttt.ckpt", "tictactoe")
    # the person tries every cell in turn: taken ones and the word are illegal and prompted again
    moves = "centre\n" + "".join(f"{cell}\n" for cell in range(1, 10))
    status, out, err = run(play.main, [checkpoint, "--seats", "az:8,human"], moves, monkeypatch, capsys)
    assert (status, err) == (0, "")
    assert "illegal move: expected a number from 1 to 9, got 'centre'; try again" in out
    assert out.count("seat 1 (human) to move [") > out.count("seat 1 (human) plays ")  # re-prompted
    assert out.splitlines()[-2].startswith("scores: seat 0 (az) ")


def test_play_refuses_bad_seats_and_short_input(monkeypatch, capsys):
    too_many = ["--game", "tictacmo", "--seats", "human,random,uct,random"]
    status, _, err = run(play.main, too_many, "", monkeypatch, capsys)
    assert status == 2 and err.splitlines()[-1].endswith("--seats names 4 seats, but the game has 3 players")
    status, _, err = run(play.main, ["--game", "tictactoe", "--seats", "human,az"], "", monkeypatch, capsys)
    assert status == 2 and "az seats need a network" in err
    status, _, err = run(play.main, ["--game", "tictactoe", "--seats", "human,random"], "5\n", monkeypatch, capsys)
    assert status == "error: the input ended before the game did"


def test_champion_from_a_real_mlflow_store(tmp_path, monkeypatch, capsys):
    from pipeline.harness.tracking import stage_run

    monkeypatch.chdir(tmp_path)  # the default store is ./mlflow.db, artifacts go under ./mlruns
    store = {"tracking_uri": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    params = parse_params({"game": "tictactoe", "tracking": store, "generations": [{"gen": 1, "prev": 0}]})
    with stage_run(params, "gate", 1) as stage:
        stage.promote_champion(tiny_checkpoint(tmp_path / "gen_1.ckpt", "tictactoe"))
        logged = {item.path for item in stage.client.list_artifacts(stage.run_id, "champion")}
    assert logged == {"champion/gen_1.ckpt", "champion/gen_1.onnx"}  # the export beside the checkpoint
    status, out, err = run(analyse.main, ["--champion", "--json"], "5\n", monkeypatch, capsys)
    assert status == 0 and json.loads(out)["moves"] == ["5"]
    assert "champion: alphazero-champion version 1 (generation 1, tictactoe, run " in err  # which one it loaded
    missing = ["--champion", "--model-name", "nobody"]
    status, _, err = run(analyse.main, missing, "5\n", monkeypatch, capsys)
    assert status == 1 and err.startswith("error: sqlite:///") and "no champion of model 'nobody'" in err
    status, _, err = run(analyse.main, ["--champion", "--tracking-uri", "sqlite:///none.db"], "", monkeypatch, capsys)
    assert status == 1 and err.startswith("error: no MLflow store at sqlite:///none.db (")
    assert not (tmp_path / "none.db").exists()


def test_the_champion_is_looked_up_per_game_and_never_plays_another_games_network(tmp_path, monkeypatch, capsys):
    """One registered model serves every game a store's runs train: `--champion` takes the game's own
    alias (`--game`, else the params.yaml beside), never the last promotion of another game."""
    from pipeline.harness.tracking import stage_run

    monkeypatch.chdir(tmp_path)
    store = {"tracking_uri": f"sqlite:///{tmp_path / 'mlflow.db'}"}
    for game in ("tictactoe", "tictacmo"):  # tictacmo promoted last: the plain `champion` alias is its
        params = parse_params({"game": game, "tracking": store, "generations": [{"gen": 1, "prev": 0}]})
        with stage_run(params, "gate", 1) as stage:
            stage.promote_champion(tiny_checkpoint(tmp_path / f"{game}.ckpt", game))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"game": "tictactoe", "generations": [{"gen": 1, "prev": 0}]}))
    status, out, err = run(analyse.main, ["--champion", "--json"], "5\n", monkeypatch, capsys)
    assert status == 0 and "version 1 (generation 1, tictactoe, run " in err
    status, out, err = run(analyse.main, ["--champion", "--game", "tictacmo", "--json"], "5\n", monkeypatch, capsys)
    assert status == 0 and "version 2 (generation 1, tictacmo, run " in err
    status, _, err = run(analyse.main, ["--champion", "--game", "connect4"], "4\n", monkeypatch, capsys)
    assert status == 1 and "plays 'tictacmo', not 'connect4'" in err and "\n" not in err.strip()


def test_the_readme_line_plays_the_three_player_default_game(tmp_path, monkeypatch, capsys):
    """`--seats human,az` on Tic-Tac-Mo: the third seat is az, the board numbers its empty cells, the
    person is told which symbol is theirs, and the end names the winner."""
    checkpoint = tiny_checkpoint(tmp_path / "mo.ckpt", "tictacmo")
    moves = "".join(f"{cell}\n" for cell in range(1, 16))
    status, out, err = run(
        play.main, [checkpoint, "--seats", "human,az", "--simulations", "8"], moves, monkeypatch, capsys
    )
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "seats: seat 0 (human), seat 1 (az), seat 2 (az)"
    assert lines[1:4] == [" 1  2  3  4  5", " 6  7  8  9 10", "11 12 13 14 15"]
    assert lines[4] == "You are X (seat 0)."
    assert lines[-2].startswith("scores: seat 0 (human) ")
    assert lines[-1] == "draw" or lines[-1].startswith(("winner: seat", "winners: seat"))


def test_the_winner_is_named():
    game = make_game("tictacmo")
    agents = play.make_agents(game, play.parse_seats("human,random", 3, fill="random", simulations=8), None, 0)
    assert play.result_line(game, agents, np.array([-1.0, 1.0, -1.0])) == "winner: seat 1 (random) playing O"
    assert play.result_line(game, agents, np.zeros(3)) == "draw"


class InterruptedInput(io.StringIO):
    """Standard input at a terminal where the person types `lines`, then presses Ctrl-C."""

    def isatty(self):
        return True

    def readline(self, *args):
        line = super().readline(*args)
        if not line:
            raise KeyboardInterrupt
        return line

    def __next__(self):
        return self.readline()


@pytest.mark.parametrize("command", ["play", "analyse"])
def test_ctrl_c_ends_with_one_line_and_status_130(tmp_path, monkeypatch, capsys, command):
    checkpoint = tiny_checkpoint(tmp_path / "ttt.ckpt", "tictactoe")
    if command == "play":
        main, argv = play.main, [checkpoint, "--seats", "human,az:4"]
    else:
        main, argv = analyse.main, [checkpoint]
    status, out, err = run(main, argv, InterruptedInput("5\n"), monkeypatch, capsys)
    assert status == 130 and err.strip().splitlines()[-1].startswith("interrupted") and "Traceback" not in err
    if command == "analyse":  # at a terminal: what to type first; a line is answered as soon as it is typed
        assert (
            err.splitlines()[0]
            == "one position a line: its moves from the start (`5 6`), an empty line the start; Ctrl-D ends"
        )
        assert out.startswith("5  seat 1 to move  move ")
    else:
        assert len(err.strip().splitlines()) == 1


def test_a_person_leaves_a_game_with_quit(tmp_path, monkeypatch, capsys):
    checkpoint = tiny_checkpoint(tmp_path / "ttt.ckpt", "tictactoe")
    status, out, err = run(play.main, [checkpoint, "--seats", "human,az:4"], "5\nQuit\n", monkeypatch, capsys)
    assert (status, err) == (0, "") and out.splitlines()[-1] == "seat 0 (human) left the game at move 3"


def test_an_empty_checkpoint_file_is_one_error_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "empty.ckpt").write_bytes(b"")
    status, _, err = run(analyse.main, [str(tmp_path / "empty.ckpt")], "5\n", monkeypatch, capsys)
    assert status == 1 and err.splitlines() == [f"error: {tmp_path / 'empty.ckpt'}: empty file, not a checkpoint"]


def test_analyse_without_a_network_asks_for_one_and_never_suggests_a_game_alone(monkeypatch, capsys):
    for argv in ([], ["--game", "tictactoe"]):
        status, _, err = run(analyse.main, argv, "5\n", monkeypatch, capsys)
        assert status == 2 and err.splitlines()[-1].endswith(
            "give the network to analyse with: a CHECKPOINT or --champion"
        )


def test_a_search_at_a_terminal_leaves_no_escape_code_after_its_last_line(tmp_path):
    """numba's colorama wrote a terminal reset (ESC[0m) at exit after `analyse`'s answer at a terminal."""
    import os
    import pty
    import subprocess
    import sys
    from pathlib import Path

    checkpoint = tiny_checkpoint(tmp_path / "ttt.ckpt", "tictactoe")
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "pipeline", "analyse", checkpoint, "--simulations", "4"]
    done = subprocess.run(command, input=b"5\n", stdout=follower, stderr=subprocess.DEVNULL, env=env, timeout=120)
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal's other end is closed: all is read
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert done.returncode == 0 and output.startswith(b"5  seat 1 to move") and b"\x1b" not in output, output
