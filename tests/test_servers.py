"""The pipeline and the sweep against the servers a team shares: a real PostgreSQL and a real
`mlflow server` on 127.0.0.1. Every run, metric, artifact, registered model version and trial is
there afterwards, and the database password reaches none of what the project logs or writes."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import optuna
import psycopg
import pytest
import yaml
from dvc_project import ROOT, tiny_pipeline_params
from mlflow import MlflowClient
from servers import mlflow_server, postgres  # noqa: F401  (fixtures)
from test_sweep import tiny_params

from pipeline.config import load_params
from pipeline.sweeps.storage import open_storage
from pipeline.sweeps.study import open_study

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset

SWEEP = [sys.executable, "-m", "pipeline", "sweep"]
PREPARE_WHEN_TOLD = """
import sys, time
from pathlib import Path
from pipeline.config import load_params
from pipeline.sweeps.study import prepare_study
params, url, folder = load_params(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
(folder / f"ready-{sys.argv[4]}").touch()
while not (folder / "go").exists():
    time.sleep(0.01)
prepare_study(params, url)
"""


def environment(**variables) -> dict:
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path, "PYTHONPATH": str(ROOT), **variables}


def all_runs(client: MlflowClient) -> list:
    experiments = [e.experiment_id for e in client.search_experiments()]
    return client.search_runs(experiments, max_results=1000)


def logged_text(client: MlflowClient) -> str:
    """Every param and tag of every run on the server, as one text to search."""
    return "\n".join(f"{k}={v}" for run in all_runs(client) for k, v in {**run.data.params, **run.data.tags}.items())


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on `port` (IPv4, from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, port_hex = local.split(":")
        if state == "0A" and int(port_hex, 16) == port:
            found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
    return found


def test_the_servers_listen_on_127_0_0_1_only(postgres, mlflow_server):  # noqa: F811
    assert listening_addresses(postgres.port) == {"127.0.0.1"}
    assert listening_addresses(int(mlflow_server.rsplit(":", 1)[1])) == {"127.0.0.1"}


def files_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.stat().st_size < 5e6)


def test_the_pipeline_logs_runs_metrics_artifacts_and_the_champion_to_an_mlflow_server(mlflow_server, tmp_path):  # noqa: F811
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pipeline", "stages", "alphazero_games"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dvc.yaml", ".gitignore"):
        shutil.copy(ROOT / name, project / name)
    params = tiny_pipeline_params(1)
    for experiment in ("fig3", "ratings"):  # the tracking is under test here, not the experiments
        params["evaluate"][experiment]["enabled"] = False
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = environment(MLFLOW_TRACKING_URI=mlflow_server)
    for command in (
        ["git", "init", "-q"],
        ["dvc", "init", "-q"],
        ["cp", str(ROOT / ".dvcignore"), "."],
        ["dvc", "repro"],
    ):
        done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
    assert not (project / "mlflow.db").exists(), "nothing went to the local default store"

    client = MlflowClient(mlflow_server)
    experiment = client.get_experiment_by_name("alphazero")
    parents = client.search_runs([experiment.experiment_id], "tags.game = 'tictacmo'")
    assert len(parents) == 1
    parent = parents[0]
    assert {m.step for m in client.get_metric_history(parent.info.run_id, "gate_score")} == {1}
    stages = client.search_runs([experiment.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert len(stages) >= 4, "init, self-play, train, gate, evaluate and report each log a run"
    assert any(client.list_artifacts(run.info.run_id) for run in [parent, *stages]), "artifacts reach the server"
    champion = client.get_model_version_by_alias("alphazero-champion", "champion")
    assert champion.run_id in {run.info.run_id for run in [parent, *stages]}


def start_together(params_path: Path, url: str, folder: Path, workers: int = 4) -> None:
    """Start `workers` processes that prepare the study at the same moment, once all have imported."""
    folder.mkdir()
    command = [sys.executable, "-c", PREPARE_WHEN_TOLD, str(params_path), url, str(folder)]
    started = [
        subprocess.Popen([*command, str(i)], env=environment(), stderr=subprocess.PIPE, text=True)
        for i in range(workers)
    ]  # fmt: skip
    while len(list(folder.glob("ready-*"))) < workers:
        assert all(w.poll() is None for w in started), [w.stderr.read()[-2000:] for w in started if w.poll()]
        time.sleep(0.05)
    (folder / "go").touch()
    for worker in started:
        assert worker.wait(timeout=300) == 0, worker.stderr.read()[-3000:]


def test_workers_starting_together_create_the_tables_once_and_one_baseline_per_study(postgres, tmp_path):  # noqa: F811
    """Without a lock, workers on a new database die on the tables' duplicate keys, and workers on a new
    study each find no trial and add a baseline of their own (three of five tries did)."""
    with psycopg.connect(postgres.url("optuna", with_password=True).replace("+psycopg", ""), autocommit=True) as db:
        db.execute("CREATE DATABASE race")
    url = postgres.url("race", with_password=True)
    for study in ("first", "second"):  # a database without tables, then one with them
        params_path = tiny_params(tmp_path, study=study)
        start_together(params_path, url, tmp_path / study)
        trials = open_study(load_params(params_path), open_storage(url)).get_trials()
        assert len(trials) == 1 and trials[0].user_attrs["baseline"], study


def test_two_sweep_workers_share_one_study_in_postgresql_and_keep_its_password_secret(
    postgres,  # noqa: F811
    mlflow_server,  # noqa: F811
    tmp_path,
):
    params_path = tiny_params(tmp_path, trials=4, generations=1)
    params = yaml.safe_load(params_path.read_text())
    params["tracking"]["tracking_uri"] = None  # from the environment, as the README advises
    params_path.write_text(yaml.safe_dump(params, sort_keys=False))
    storage = postgres.url("optuna", with_password=True)  # the careless way: a password in the URL
    env = environment(OPTUNA_STORAGE=storage, MLFLOW_TRACKING_URI=mlflow_server)
    command = [*SWEEP, "--params", str(params_path)]
    workers = [
        subprocess.Popen([*command, "--worker", str(i)], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]  # fmt: skip
    outputs = []
    for worker in workers:
        out, errors = worker.communicate(timeout=600)
        assert worker.returncode == 0, errors[-3000:]
        outputs.append(out + errors)

    study = open_study(load_params(params_path), open_storage(storage))
    trials = study.get_trials()
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    assert 4 <= len(trials) <= 5  # both workers may start a trial when three are done
    assert sorted(t.number for t in trials) == list(range(len(trials))), "no trial lost or counted twice"
    client = MlflowClient(mlflow_server)
    children = [r for r in all_runs(client) if "optuna_trial" in r.data.tags]
    assert sorted(r.info.run_id for r in children) == sorted(t.user_attrs["mlflow_run_id"] for t in trials)

    password = postgres.password
    logged = logged_text(client)
    assert f"{postgres.port}/optuna" in logged, "the storage URL is logged, masked"
    assert password not in logged
    assert all(password not in text for text in outputs)
    assert password not in files_text(tmp_path / "sweeps")


def test_a_database_store_that_refuses_the_login_stops_a_stage_in_one_line(postgres, tmp_path):  # noqa: F811
    from pipeline.config import parse_params
    from pipeline.harness.tracking import warm_up
    from pipeline.plumbing.stores import StoreError

    url = postgres.url("mlflow").replace("@", ":not-the-password@")
    params = parse_params(
        {"game": "tictactoe", "tracking": {"tracking_uri": url}, "generations": [{"gen": 1, "prev": 0}]}
    )
    try:
        warm_up(params)
    except StoreError as err:
        message = str(err)
    else:
        raise AssertionError("a refused login passed the store check")
    assert message.startswith(f"MLflow store {postgres.url('mlflow').replace('@', ':***@')}: ")
    assert "password authentication failed" in message
    assert "not-the-password" not in message and "\n" not in message
