"""Population-based training on tiny real budgets: Tic-Tac-Toe members on Ray Tune that train, are
measured, copy and perturb; a driver and a member killed with SIGKILL and the population resumed; the
report, the champion and its params; MLflow's parent and member runs; and bad population params refused in
one line before Ray starts."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from mlflow import MlflowClient
from tiny_params import tiny_tictactoe

from pipeline.commands import sweep as sweep_command
from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.sweeps.population import reported_generations

pytestmark = pytest.mark.slow  # Ray and a population: `pytest -m 'not slow'` leaves them out

SPACE = {
    "search.c_puct": {"low": 0.5, "high": 5.0, "log": True},
    "search.simulations": {"low": 2, "high": 8},
    "train.learning_rate": {"low": 0.0005, "high": 0.005, "log": True},
}


def tiny_population(folder: Path, **population) -> Path:
    data = tiny_tictactoe(folder)
    data["sweep"] = {
        "population": {
            "study": "tiny",
            "members": 3,
            "generations": 4,
            "interval": 1,
            "panel": ["random", "uct:4"],
            "games_per_seating": 1,
            "eval_simulations": 4,
            "quantile": 0.34,
            "resample": 0.5,
            "space": SPACE,
            **population,
        }
    }
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def start(folder: Path, params: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "pipeline", "sweep", "--population", "--params", str(params)]
    command += ["--dir", str(folder / "runs"), "--out", str(folder / "report")]
    return subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def reports(folder: Path) -> int:
    """Reports written so far by every member (Ray Tune's result.json, one line each)."""
    return sum(len(p.read_text().splitlines()) for p in (folder / "runs" / "tiny").glob("member_*/result.json"))


def family(driver: int) -> list[tuple[int, str]]:
    """The driver and its descendants (its local Ray), with their command lines."""
    table = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True).stdout
    rows = [line.split(None, 2) for line in table.splitlines()]
    children: dict[int, list[int]] = {}
    for pid, ppid, *_ in rows:
        children.setdefault(int(ppid), []).append(int(pid))
    found, todo = set(), [driver]
    while todo:
        found.add(pid := todo.pop())
        todo += children.get(pid, [])
    return [(int(pid), "".join(args)) for pid, _, *args in rows if int(pid) in found]


def members_training(driver: int) -> list[int]:
    """The members the population `driver` runs are training now: Ray Tune's trainables among its
    descendants (another population may be training beside the suite)."""
    return [pid for pid, command in family(driver) if "ray::ImplicitFunc" in command]


def kill_all(processes: list[int]) -> None:
    for pid in processes:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_for(condition, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the population made no progress"
        time.sleep(0.5)


def test_a_population_trains_copies_survives_kills_resumes_tracks_and_reports(tmp_path):
    params_path = tiny_population(tmp_path)
    driver, ray = start(tmp_path, params_path), []
    try:
        wait_for(lambda: reports(tmp_path) >= 2 and members_training(driver.pid))
        os.kill(members_training(driver.pid)[0], signal.SIGKILL)  # a member: Ray Tune restarts it from its checkpoint
        wait_for(lambda: reports(tmp_path) >= 5)
        ray = [pid for pid, _ in family(driver.pid)]
        driver.send_signal(signal.SIGKILL)  # the driver: the same command resumes the population
        driver.wait()
    finally:
        kill_all([pid for pid, _ in family(driver.pid)])
    kill_all(ray)  # what a killed driver's Ray leaves (its agents) would only slow the rest of the suite
    before = reports(tmp_path)
    done_before = sum(reported_generations(tmp_path / "runs" / "tiny").values())
    resumed = start(tmp_path, params_path)
    try:
        output = resumed.communicate(timeout=600)[0]
    finally:
        kill_all([pid for pid, _ in family(resumed.pid)])
    assert resumed.returncode == 0, output
    assert reports(tmp_path) > before
    bar = next(line for line in output.splitlines() if line.startswith("population generations"))
    assert f" {done_before}/12 " in bar, bar  # the resumed bar starts where the population stood

    rows = pd.read_csv(tmp_path / "report" / "schedule.csv")
    # every member to the end; one that copied a finished member has its network and nothing left to report
    last = rows.groupby("member")["generation"].max()
    assert len(last) == 3 and last.max() == 4 and last.min() >= 3
    for path, dim in SPACE.items():  # explore keeps every setting inside its space
        assert rows[path].between(dim["low"], dim["high"]).all(), path
    assert (rows["search.simulations"] == rows["search.simulations"].round()).all()
    # exploit: right after a copy (Ray Tune decides when; `test_a_copy_...` makes one), the member's
    # network is the one its source reported with
    copies = rows[rows["copied_from"] >= 0]
    for _, copy in copies.iterrows():
        source = rows[(rows["member"] == copy["copied_from"]) & (rows["generation"] < copy["generation"])]
        assert copy["restored_weights"] in set(source["weights"])
    # a resumed member goes on from its own checkpoint, not from scratch
    own = rows[rows["copied_from"] < 0]
    assert own["restored_weights"].isin(set(rows["weights"])).any()

    params = load_params(tmp_path / "report" / "champion_params.yaml")
    assert 0.5 <= params.search.c_puct <= 5.0 and params.sweep.population.study == "tiny"
    load_checkpoint(tmp_path / "report" / "champion.ckpt", make_game("tictactoe"))
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Champion: member" in report and "champion_params.yaml" in report
    for name in ("schedule.png", "strength.png"):
        assert (tmp_path / "report" / name).stat().st_size > 0

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("alphazero-sweeps")
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    parents = [r for r in runs if r.data.tags.get("sweep_role") == "parent"]
    members = [r for r in runs if "population_member" in r.data.tags]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"  # one parent across the two drivers
    assert sorted(r.data.tags["population_member"] for r in members) == ["0", "1", "2"]
    for run in members:
        assert run.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
        # every generation the member reported, once; a member that copied one ahead of it skips the gap
        reported = set(rows.loc[rows["member"] == int(run.data.tags["population_member"]), "generation"])
        assert {m.step for m in client.get_metric_history(run.info.run_id, "fitness")} == reported
        assert "setting.search.c_puct" in run.data.metrics and "lineage" in run.data.tags
    copied = {r.data.tags["population_member"] for r in members if any(t.startswith("copied_at") for t in r.data.tags)}
    assert copied == {str(m) for m in copies["member"]}  # each member run tags its copies


@pytest.mark.parametrize(
    "population, message",
    [
        ({"space": {"network.channels": {"choices": [8, 16]}}}, "'network.channels' cannot change between generations"),
        ({"space": {"search.c_puct": {"low": -5, "high": -1}}}, "'search.c_puct' = -5"),
        ({"space": {"selfplay.games": {"low": 2, "high": 8}}}, "'selfplay.games' follows search.simulations"),
        ({"generations": 5, "interval": 2}, "generations: 5 is not a multiple of interval 2"),
        ({"panel": ["bogus:3"]}, "sweep.population.panel[0]"),
    ],
)
def test_bad_population_params_are_one_line_before_ray_starts(tmp_path, capsys, population, message):
    params_path = tiny_population(tmp_path, **population)
    with pytest.raises(SystemExit) as stopped:
        sweep_command.main(["--population", "--params", str(params_path), "--dir", str(tmp_path / "runs")])
    assert stopped.value.code != 0
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and message in error, error
    assert not (tmp_path / "runs").exists()


def test_a_copy_takes_the_sources_network_and_window_with_its_own_seed_and_settings(tmp_path):
    """Exploit as a member sees it: started from another member's checkpoint, it holds the source's
    weights and window, records whom it copied at which generation, and keeps its own settings."""
    from pipeline.nets.checkpoint import weights_digest
    from pipeline.sweeps.population import MemberState, member_params, save_member, start_member
    from pipeline.sweeps.training_loop import play_and_train

    base = load_params(tiny_population(tmp_path))
    game = make_game(base.game)
    source_params = member_params(base, {"search.c_puct": 2.0}, 1)
    model, samples, _, _ = start_member(None, game, source_params, 1, {"search.c_puct": 2.0})
    samples, _, _ = play_and_train(game, model, samples, source_params, 1)
    save_member(tmp_path, model, samples, MemberState(1, 1, {"search.c_puct": 2.0}, lineage=[[0, 2]]), game.name)

    mine = {"search.c_puct": 0.7}
    copy, window, state, copied_from = start_member(tmp_path, game, member_params(base, mine, 0), 0, mine)
    assert copied_from == 1 and weights_digest(copy.state_dict()) == weights_digest(model.state_dict())
    assert (window["states"] == samples["states"]).all() and len(window["states"]) > 0
    assert state.member == 0 and state.generation == 1 and state.values == mine
    assert state.lineage == [[0, 2], [1, 1]]
    _, _, again, restarted = start_member(tmp_path, game, source_params, 1, {"search.c_puct": 2.0})
    assert restarted == -1 and again.lineage == [[0, 2]]  # its own checkpoint: a restart, not a copy
