"""The mistakes benchmark with a real (tiny, random) network: labels and the solver agree on the
outcomes, search runs, and the command line prints rows or one error line naming file and line.
Exact counting with perfect and worst choosers is in test_connect4_agents.py."""

import json

import pytest
import torch

from alphazero_games.connect.commands.pons_benchmark import main
from alphazero_games.connect.experiments.pons import mistake_rates
from alphazero_games.connect.positions import CONNECT4
from pipeline.games import make_game
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import NetworkShape, SENet

DATA = CONNECT4
GAME = make_game("connect4")


@pytest.fixture(scope="module")
def network():
    torch.manual_seed(0)
    return SENet(NetworkShape.for_game(GAME, 1, 8, 2)).eval()


def test_labels_and_solver_give_the_same_mistakes(network):
    files = [DATA / "cols_L3_R1.txt", DATA / "Test_L3_R1"]  # the same end-game positions
    rows = mistake_rates(GAME, NetworkEvaluator(GAME, network), files, 8, [0, 4])
    assert [(r["set"], r["chooser"], r["positions"]) for r in rows] == [
        ("Test_L3_R1", "policy", 8),
        ("Test_L3_R1", "search 4", 8),
    ] * 2
    assert [r["mistakes"] for r in rows[:2]] == [r["mistakes"] for r in rows[2:]]
    assert all(r["percent"] == 100 * r["mistakes"] / 8 for r in rows)


def test_command_prints_rows_or_one_error_line(network, tmp_path, capsys):
    checkpoint = tmp_path / "net.ckpt"
    save_checkpoint(checkpoint, network, GAME.name)
    main([str(checkpoint), "--simulations", "0", "--files", str(DATA / "cols_L2_R1.txt"), "--positions", "3", "--json"])
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["set"] == "Test_L2_R1" and row["positions"] == 3

    broken = tmp_path / "broken"
    broken.write_text("4453 3\n1111111 2\n")
    with pytest.raises(SystemExit) as exit_info:
        main([str(checkpoint), "--simulations", "0", "--files", str(broken)])
    assert exit_info.value.code == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {broken}: line 2: ") and "not legal" in line

    with pytest.raises(SystemExit):
        main([str(checkpoint), "--c-puct", "0"])
    assert capsys.readouterr().err.splitlines()[-1].endswith("--c-puct: expected a positive number, got 0.0")
    with pytest.raises(SystemExit):
        main([str(checkpoint), "--fpu-reduction", "-0.1"])
    refusal = capsys.readouterr().err.splitlines()[-1]
    assert refusal.endswith("--fpu-reduction: expected a number of at least 0, got -0.1")

    files = ["--files", str(DATA / "cols_L2_R1.txt"), "--positions", "3", "--json", "--simulations", "0"]
    main([str(checkpoint), *files, "--runtime", "torch"])  # the same rows from torch's runtime
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [row]
    with pytest.raises(SystemExit):
        main([str(checkpoint), "--precision", "bfloat16", "--runtime", "onnxruntime"])
    refusal = capsys.readouterr().err.splitlines()[-1]
    assert refusal.endswith("--runtime: onnxruntime runs float32 on the CPU; use torch or auto here")
