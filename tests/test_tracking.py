"""MLflow runs end in the state of the work they track: a stage killed with SIGKILL leaves a RUNNING
run that its re-run ends KILLED; logged params never show a password."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from mlflow import MlflowClient

from pipeline.config import parse_params
from pipeline.jobs.tracking import stage_run, start_pipeline_run

ROOT = Path(__file__).resolve().parents[1]
GENERATIONS = [{"gen": 1, "prev": 0}]
STAGE = """
import sys, time
from pipeline.config import parse_params
from pipeline.jobs.tracking import stage_run
tracking = {"tracking_uri": sys.argv[1]}
params = parse_params({"game": "tictactoe", "tracking": tracking, "generations": [{"gen": 1, "prev": 0}]})
with stage_run(params, "selfplay", 1) as run:
    print(run.run_id, flush=True)
    time.sleep(600)
"""


def test_a_killed_stage_run_is_ended_killed_when_the_stage_runs_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # models/run.json and MLflow's artifacts
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    params = parse_params({"game": "tictactoe", "tracking": {"tracking_uri": uri}, "generations": GENERATIONS})
    start_pipeline_run(params)
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
    start_pipeline_run(params)
    with stage_run(params, "selfplay", 1) as run:
        run.log_params({"server": "http://ada:pa:ss@mlflow.example:5000", "storage": "postgresql://bo@db/optuna"})
    logged = MlflowClient(uri).get_run(run.run_id).data.params
    assert logged == {"server": "http://ada:***@mlflow.example:5000", "storage": "postgresql://bo@db/optuna"}
