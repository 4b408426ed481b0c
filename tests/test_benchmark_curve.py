"""The strength-against-compute curve: every generation's Pons-set mistakes, each distinct network
scored once (a corrupt cache entry is scored again), joined with the compute its metrics record, and
drawn in the report."""

import json

import pytest
import yaml
from test_evaluate import networks, tiny_params
from test_report import GATE, SELFPLAY, TRAIN

from alphazero_games.connect.experiments.benchmark import BenchmarkResult
from pipeline.evaluation.evaluate import run_evaluation
from pipeline.evaluation.lineage import compute_before
from pipeline.evaluation.run_report import write_report
from pipeline.evaluation.strength_curve import cumulative_compute, curve
from pipeline.experiments import Evaluation
from pipeline.games import make_game
from pipeline.jobs.replay import DataError


def test_compute_adds_up_per_generation_and_estimates_old_runs():
    selfplay = [
        {"games": 10, "mean_game_length": 20.0, "seconds": 360.0, "simulations": 5000},
        {"games": 10, "mean_game_length": 30.0, "seconds": 720.0},  # recorded before simulations were counted
    ]
    train = [{"samples": 1000, "samples_per_s": 500.0, "epochs": [{}, {}]}] * 2  # 4 s each
    gate = [{"gate_seconds": 36.0}, {}]
    totals = cumulative_compute(selfplay, train, gate, per_move=50)
    assert [t["simulations"] for t in totals] == [0, 5000, 5000 + 10 * 30 * 50]
    assert totals[1]["hours"] == pytest.approx((360 + 4 + 36) / 3600)
    assert totals[2]["hours"] == pytest.approx((360 + 4 + 36 + 720 + 4) / 3600)


def test_every_generation_is_scored_once_and_a_corrupt_entry_again(tmp_path, caplog):
    game = make_game("connect4")
    off = {"enabled": False}
    params = tiny_params("connect4", fig3=off, ratings=off, alphabeta=off, solver_games=off)
    nets = networks(game, 3, same_as_previous=(1,))  # generation 1 promoted nothing
    first = run_evaluation(game, nets, params, tmp_path, progress=False).to_json()
    rows = first["benchmark_generations"]
    assert sorted({r["generation"] for r in rows}) == [0, 1, 2]
    by_generation = {g: [r for r in rows if r["generation"] == g] for g in range(3)}
    assert [r["percent"] for r in by_generation[0]] == [r["percent"] for r in by_generation[1]]
    assert [{**r, "generation": 2} for r in first["benchmark"]] == by_generation[2], "the champion is the last"
    entries = sorted((tmp_path / "benchmark").glob("*.json"))
    assert len(entries) == 2, "one entry per distinct network"

    entries[0].write_text("{not json")
    again = run_evaluation(game, nets, params, tmp_path, progress=False).to_json()
    assert again["benchmark_generations"] == rows
    assert "corrupt entry" in caplog.text
    assert all(isinstance(json.loads(e.read_text()), list) for e in entries)


def test_the_report_draws_mistakes_against_simulations_and_hours(tmp_path):
    selfplay = [{**s, "games": 10, "mean_game_length": 20.0, "seconds": 60.0, "simulations": 9000} for s in SELFPLAY]
    train = [{**t, "samples": 100, "samples_per_s": 100.0} for t in TRAIN]
    scores = [
        {"generation": g, "set": s, "chooser": c, "positions": 5, "mistakes": 1, "percent": 20.0 - g}
        for g in range(4)
        for s in ("Test_L3_R1", "Test_L1_R2")
        for c in ("policy", "search 4")
    ]
    evaluation = Evaluation(simulations=8, seconds=0.0, results=[BenchmarkResult(8, [], scores)])
    write_report(tmp_path, "connect4", selfplay, train, GATE, evaluation)
    assert (tmp_path / "benchmark_curve.png").stat().st_size > 0
    markdown = (tmp_path / "report.md").read_text()
    assert "## Connect-4 mistakes against compute" in markdown
    assert "| 3 | 27000 |" in markdown, "generation 3 row with its cumulative simulations"
    rows = curve(scores, cumulative_compute(selfplay, train, GATE, 8))
    assert {r["generation"] for r in rows} == {0, 1, 2, 3} and rows[-1]["simulations"] == 27000


FIGURES = {  # one generation's metrics: 400 simulations, half an hour of self-play, 40 s of training
    "selfplay": {"games": 4, "mean_game_length": 10.0, "seconds": 1800.0, "simulations": 400},
    "train": {"samples": 40, "samples_per_s": 1.0, "epochs": [{}]},
    "gate": {"gate_seconds": 0.0},
}


def write_run(folder, warm_start, generations: int) -> None:
    """A Connect-4 run folder as `dvc repro` leaves it, but for `metrics/start.json` (as runs before it
    did): params, every generation's best network and metrics."""
    import torch
    import yaml

    from pipeline.nets.checkpoint import save_checkpoint
    from pipeline.nets.senet import NetworkShape, SENet

    game = make_game("connect4")
    params = {"game": "connect4", "search": {"simulations": 10}, "warm_start": warm_start}
    params["generations"] = [{"gen": g, "prev": g - 1} for g in range(1, generations + 1)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    for generation in range(generations + 1):
        torch.manual_seed(generation)
        network = SENet(NetworkShape.for_game(game, 1, 8, 2))
        save_checkpoint(folder / f"models/best/gen_{generation}.ckpt", network, "connect4")
    for stage, data in FIGURES.items():
        (folder / "metrics" / stage).mkdir(parents=True)
        for generation in range(1, generations + 1):
            (folder / "metrics" / stage / f"gen_{generation}.json").write_text(json.dumps(data))


@pytest.mark.parametrize("warm_start", [None, "connect4"])
def test_the_command_draws_a_run_folders_curve(tmp_path, capsys, warm_start):
    """From zero, or, for a run warm-started from a shipped champion, from the compute on its card."""
    from alphazero_games.connect.commands.benchmark_curve import main

    start = compute_before(warm_start)
    assert not warm_start or start["simulations"] > 0, "the connect4 card says what trained it"
    write_run(tmp_path, warm_start, generations=1)
    main([str(tmp_path), "--simulations", "0", "--positions", "2", "--json", "--plot", str(tmp_path / "curve.png")])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(r["generation"], r["simulations"]) for r in rows} == {
        (0, start["simulations"]),
        (1, start["simulations"] + 400),
    }
    assert all(r["hours"] == pytest.approx(start["hours"] + 0.5 + 40 / 3600) for r in rows if r["generation"] == 1)
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert len(list((tmp_path / "data/matches/benchmark").glob("*.json"))) == 2


def test_a_warm_start_from_another_runs_network_carries_that_runs_compute(tmp_path, caplog):
    """Its compute up to that generation, that run's own warm start included; any other file: zero,
    said in a warning; unreadable metrics: one error naming the file."""
    card = compute_before("connect4")
    write_run(tmp_path / "first", "connect4", generations=2)
    second = tmp_path / "second"  # the run that starts from it
    second.mkdir()
    for generation in (1, 2):
        carried = compute_before(f"../first/models/best/gen_{generation}.ckpt", second)
        assert carried["simulations"] == card["simulations"] + 400 * generation
        assert carried["hours"] == pytest.approx(card["hours"] + generation * (0.5 + 40 / 3600))
    assert not caplog.text
    nothing = {"simulations": 0, "hours": 0.0}
    assert compute_before("../first/models/best/gen_3.ckpt", second) == nothing  # not finished
    assert compute_before("elsewhere/gen_1.ckpt", second) == nothing
    assert caplog.text.count("the compute behind it counts as 0") == 2
    (tmp_path / "first/metrics/train/gen_2.json").write_text("{")
    with pytest.raises(DataError, match=r"first/metrics/train/gen_2.json: cannot read metrics"):
        compute_before(str(tmp_path / "first/models/best/gen_1.ckpt"))


def test_warm_starts_that_loop_count_zero_and_other_code_s_params_are_read(tmp_path, caplog):
    """A run warm-started from its own network (DVC deleted its start.json to run init again), or two
    runs from each other: zero with a warning, never a recursion. A run of other code, whose
    params.yaml has keys this code does not know, still gives its compute."""
    import yaml

    write_run(tmp_path / "a", "../b/models/best/gen_1.ckpt", generations=1)
    write_run(tmp_path / "b", "../a/models/best/gen_1.ckpt", generations=1)
    nothing = {"simulations": 0, "hours": 0.0}
    assert compute_before("models/best/gen_1.ckpt", tmp_path / "a") == nothing
    assert compute_before("../a/models/best/gen_1.ckpt", tmp_path / "b")["simulations"] == 400
    assert caplog.text.count("lead back to") == 2
    params = yaml.safe_load((tmp_path / "a/params.yaml").read_text())
    (tmp_path / "a/params.yaml").write_text(yaml.safe_dump({**params, "warm_start": None, "renamed_key": 1}))
    assert compute_before("../a/models/best/gen_1.ckpt", tmp_path / "b")["simulations"] == 400
    (tmp_path / "a/metrics/start.json").write_text('{"hours": 1.0}')
    with pytest.raises(DataError, match=r"a/metrics/start.json: expected numbers simulations"):
        compute_before("../a/models/best/gen_1.ckpt", tmp_path / "b")


def test_the_command_refuses_a_run_of_another_game_in_one_line(tmp_path, capsys):
    from alphazero_games.connect.commands import benchmark_curve

    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"game": "tictacmo", "generations": [{"gen": 1, "prev": 0}]}))
    with pytest.raises(SystemExit) as stopped:
        benchmark_curve.main([str(tmp_path)])
    assert stopped.value.code == 1
    expected = f"error: {params}: game 'tictacmo'; benchmark_curve scores Connect-4 runs only"
    assert capsys.readouterr().err.splitlines() == [expected]
