"""MLflow runs end in the state of the work they track: a stage killed with SIGKILL leaves a RUNNING
run that its re-run ends KILLED; logged params never show a password; each setting of the params is
a parent run of its own, named for the DVC experiment that ran it, and a curve holds one value a step."""

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from mlflow import MlflowClient
from shipped import shipped_params

from pipeline.config import parse_params
from pipeline.harness.tracking import default_tracking_uri, stage_run

ROOT = Path(__file__).resolve().parents[1]
GENERATIONS = [{"gen": 1, "prev": 0}]
STAGE = """
import sys, time
from pipeline.config import parse_params
from pipeline.harness.tracking import default_tracking_uri, stage_run
tracking = {"tracking_uri": sys.argv[1]}
params = parse_params({"game": "tictactoe", "tracking": tracking, "generations": [{"gen": 1, "prev": 0}]})
with stage_run(params, "selfplay", 1) as run:
    print(run.run_id, flush=True)
    time.sleep(600)
"""


def test_a_killed_stage_run_is_ended_killed_when_the_stage_runs_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MLflow's artifacts
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    params = parse_params({"game": "tictactoe", "tracking": {"tracking_uri": uri}, "generations": GENERATIONS})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stage = subprocess.Popen([sys.executable, "-c", STAGE, uri], env=env, stdout=subprocess.PIPE, text=True)
    killed = stage.stdout.readline().strip()
    stage.send_signal(signal.SIGKILL)
    stage.communicate()
    client = MlflowClient(uri)
    with stage_run(params, "selfplay", 2):  # another generation: not its business
        pass
    assert client.get_run(killed).info.status == "RUNNING"
    with stage_run(params, "selfplay", 1) as rerun:
        with stage_run(params, "selfplay", 1):  # the first re-run's process (this one) lives: left alone
            assert client.get_run(rerun.run_id).info.status == "RUNNING"
    run = client.get_run(killed)
    assert (run.info.status, run.data.tags["ended_by"]) == ("KILLED", "a re-run of the stage: its process was gone")
    assert client.get_run(rerun.run_id).info.status == "FINISHED"


def test_logged_params_mask_passwords(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    params = parse_params({"game": "tictactoe", "tracking": {"tracking_uri": uri}, "generations": GENERATIONS})
    with stage_run(params, "selfplay", 1) as run:
        run.log_params({"server": "http://ada:pa:ss@mlflow.example:5000", "storage": "postgresql://bo@db/optuna"})
    logged = MlflowClient(uri).get_run(run.run_id).data.params
    mine = {key: logged[key] for key in ("server", "storage")}
    assert mine == {"server": "http://ada:***@mlflow.example:5000", "storage": "postgresql://bo@db/optuna"}
    assert logged["game"] == "tictactoe"  # and the setting's params, on every stage's run


def parents(uri: str) -> list:
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("alphazero")
    return client.search_runs([experiment.experiment_id], "tags.setting != ''", order_by=["attributes.start_time"])


def test_each_setting_is_a_parent_run_of_its_own_with_its_params_and_experiment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"

    def params(c_puct: float, threads: int = 0):
        tracking = {"tracking_uri": uri}
        data = {"game": "tictactoe", "search": {"c_puct": c_puct}, "threads": threads, "tracking": tracking}
        return parse_params({**data, "generations": GENERATIONS})

    monkeypatch.setenv("DVC_EXP_NAME", "paper")
    monkeypatch.setenv("DVC_EXP_BASELINE_REV", "0123abcd" * 5)
    with stage_run(params(3.0), "selfplay", 1) as paper:
        paper.log_metrics({"selfplay_games": 4.0})
    with stage_run(params(3.0, threads=1), "train", 1) as same:  # where it runs is not part of the setting
        same.log_metrics({"train_policy_loss": 1.5})
    monkeypatch.setenv("DVC_EXP_NAME", "greedier")
    with stage_run(params(2.0), "selfplay", 1) as greedier:
        greedier.log_metrics({"selfplay_games": 6.0})
    runs = parents(uri)
    assert [run.info.run_name for run in runs] == ["paper", "greedier"]
    assert [run.data.params["search.c_puct"] for run in runs] == ["3.0", "2.0"]
    assert same.parent_id == paper.parent_id == runs[0].info.run_id and greedier.parent_id == runs[1].info.run_id
    assert runs[0].data.tags["dvc_experiment"] == "paper"
    assert runs[0].data.tags["mlflow.source.git.commit"] == "0123abcd" * 5
    assert runs[0].data.metrics == {"selfplay_games": 4.0, "train_policy_loss": 1.5}
    assert runs[1].data.metrics == {"selfplay_games": 6.0}


def test_a_curve_holds_one_value_per_generation_when_a_stage_logs_twice(tmp_path, monkeypatch):
    """An orphaned stage (its `dvc` killed, not its group) logs, then its re-run logs the same generation."""
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    params = parse_params({"game": "tictactoe", "tracking": {"tracking_uri": uri}, "generations": GENERATIONS})
    for value in (0.5, 0.6):
        with stage_run(params, "gate", 1) as run:
            run.log_metrics({"gate_score": value})
    with stage_run(params, "report", 1) as report:
        report.log_history([("gate_score", 0.7, 1), ("gate_score", 0.4, 2)])
    history = MlflowClient(uri).get_metric_history(report.parent_id, "gate_score")
    assert sorted((m.step, m.value) for m in history) == [(1, 0.5), (2, 0.4)]


def test_the_default_store_of_a_dvc_run_is_at_the_repository_root(tmp_path, monkeypatch):
    """`dvc exp run --temp` and queued experiments run in a copy under .dvc/tmp; DVC names the root."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("DVC_ROOT", str(tmp_path))
    assert default_tracking_uri(tmp_path / ".dvc/tmp/exps/tmp1234") == f"sqlite:///{tmp_path / 'mlflow.db'}"


def test_a_store_where_nothing_answers_stops_a_stage_in_one_line_before_any_work(tmp_path):
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = shipped_params()
    params.update(game="tictactoe", workers=1, generations=GENERATIONS)
    params["tracking"]["tracking_uri"] = f"http://ada:s3cret@127.0.0.1:{port}"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for stage in (["init"], ["selfplay", "1", "0"]):
        done = subprocess.run([sys.executable, "-m", f"stages.{stage[0]}", *stage[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: MLflow store http://ada:***@127.0.0.1:{port}: nothing answers at 127.0.0.1:{port} (Connection refused)"
    ]
    assert not (tmp_path / "data/selfplay").exists(), "no game was played"


def runs_database(path: Path) -> Path:
    """A SQLite file of a few hundred kilobytes: one table of 2,000 rows."""
    import sqlite3

    with sqlite3.connect(path) as database:
        database.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT)")
        database.executemany("INSERT INTO runs (name) VALUES (?)", [("run " * 50,)] * 2000)
    return path


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_sqlite_store_is_one_line_naming_it(tmp_path, damage):
    from pipeline.plumbing.stores import StoreError, check_store

    store = runs_database(tmp_path / "mlflow.db")
    check_store(f"sqlite:///{store}")  # whole: fine
    data = store.read_bytes()
    store.write_bytes(b"not a database " * 100 if damage == "garbage" else data[: len(data) // 2])
    with pytest.raises(StoreError, match=rf"^MLflow store sqlite:///{store}: (not a readable|a damaged) SQLite"):
        check_store(f"sqlite:///{store}")


KILLED_MID_WRITE = """
import os, signal, sqlite3, sys
database = sqlite3.connect(sys.argv[1])
database.execute("PRAGMA cache_size = 1")  # the change spills into the file before the commit
database.execute("BEGIN")
database.execute("UPDATE runs SET name = upper(name)")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_sqlite_store_left_by_a_process_killed_mid_write_is_usable(tmp_path):
    """A killed writer leaves a hot journal that the next writer rolls back; the check must not refuse it."""
    import sqlite3

    from pipeline.plumbing.stores import check_store

    store = runs_database(tmp_path / "mlflow.db")
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(store)], timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert (tmp_path / "mlflow.db-journal").exists(), "the kill left a hot journal"
    check_store(f"sqlite:///{store}")
    with sqlite3.connect(store) as database:
        assert database.execute("SELECT count(*) FROM runs WHERE name != lower(name)").fetchone() == (0,), "rolled back"


def test_compare_against_a_server_where_nothing_answers_is_one_line(capsys):
    from pipeline.commands.compare import main

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SystemExit) as stopped:
        main(["--tracking-uri", f"http://127.0.0.1:{port}"])
    assert stopped.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: MLflow store http://127.0.0.1:{port}: nothing answers at 127.0.0.1:{port} (Connection refused)"
    ]


class Unauthorized(BaseHTTPRequestHandler):
    """A server that refuses every request, as an MLflow server behind basic authentication does."""

    def do_GET(self):
        self.server.seen.append(self.headers.get("Authorization"))
        self.send_response(401)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_server_refusing_the_user_and_password_of_the_uri_is_one_line_naming_the_401(capsys, monkeypatch):
    from pipeline.commands.compare import main

    with ThreadingHTTPServer(("127.0.0.1", 0), Unauthorized) as server:
        server.seen = []
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_port
        monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://alice:pw%40x@127.0.0.1:{port}")
        with pytest.raises(SystemExit) as stopped:
            main([])
        server.shutdown()
    assert stopped.value.code == 1
    store = f"http://alice:***@127.0.0.1:{port}"
    assert capsys.readouterr().err.splitlines() == [
        f"error: MLflow store {store}: refuses the credentials of the URL (HTTP 401 Unauthorized)"
    ]
    assert server.seen == ["Basic " + base64.b64encode(b"alice:pw@x").decode()], "the URL's credentials, as MLflow's"


FULL_DISK_STAGE = """
import sys
from pathlib import Path
from pipeline.plumbing.atomic import write_json
from pipeline.config import parse_params
from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import stage_run, warm_up

disk, order = Path(sys.argv[1]), sys.argv[2]
params = parse_params({"game": "tictactoe", "generations": [{"gen": 1, "prev": 0}],
                       "tracking": {"tracking_uri": f"sqlite:///{disk / 'mlflow.db'}"}})


def fill_the_disk():
    with open(disk / "filler", "wb") as filler:
        try:
            while True:
                filler.write(bytes(2**20))
        except OSError:
            pass


@entry_point
def main(argv):
    warm_up(params)  # the store's check passes: the disk still has room
    with stage_run(params, "selfplay", 1) as run:
        run.log_metrics({"games": 1.0})
        if order == "output_first":
            write_json(disk / "metrics.json", {"games": 1})
        fill_the_disk()  # as another process would, mid-stage
        if order == "full_first":
            write_json(disk / "metrics.json", {"games": 1})
        run.log_metrics({"samples": 9.0})


main([])
"""


@pytest.mark.parametrize("order", ["output_first", "full_first"])
def test_a_disk_that_fills_mid_stage_is_one_line_and_the_output_is_whole_or_absent(small_disk, order):
    """The store's check passed, then the disk filled: MLflow's SQLite store answered "database or disk is
    full" through 500 lines and 16 tracebacks; an output is written whole before, or not at all after."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", FULL_DISK_STAGE, str(small_disk), order], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1 and done.stdout == ""
    if order == "output_first":
        assert done.stderr.splitlines() == [
            f"error: MLflow store sqlite:///{small_disk}/mlflow.db: database or disk is full"
        ]
        assert json.loads((small_disk / "metrics.json").read_text()) == {"games": 1}
    else:
        assert done.stderr.splitlines() == [
            f"error: {small_disk / 'metrics.json'}: cannot be written (No space left on device)"
        ]
        assert not (small_disk / "metrics.json").exists()
    assert not [path.name for path in small_disk.iterdir() if path.name.endswith(".tmp")], "no temporary file is left"
