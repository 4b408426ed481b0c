"""The whole DVC pipeline on tiny params in a temporary git repo: a first run, a no-op second run,
an added generation, a changed evaluation param, MLflow figures read back, and bad params refused."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
    "search": {"rollouts": 8},
    "selfplay": {"games": 6, "parallel_games": 6},
    "train": {"epochs": 1},
    "gate": {"games_per_seating": 1, "threshold": 0.0},  # every candidate is promoted
    "evaluate": {
        "fig3": {"opponent_rollouts": [4, 8], "games_per_seating": 1},
        "ratings": {"games_per_seating": 1, "uct_baselines": [4]},
        "pig_oracle": {"games_per_seat": 4},
        "alphabeta": {"simulations": [4], "depths": [1, 2], "games_per_side": 1},
        "solver_games": {"simulations": [4], "games_per_side": 1},
        "benchmark": {"simulations": [0, 4], "positions_per_set": 3},
    },
}


def run(cmd, cwd, check=True):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def repro(project) -> set[str]:
    """Run `dvc repro`; return the names of the stages that actually ran."""
    return set(re.findall(r"Running stage '([^']+)'", run(["dvc", "repro"], project).stdout))


def edit_params(project, change):
    path = project / "params.yaml"
    params = yaml.safe_load(path.read_text())
    change(params)
    path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    project = tmp_path_factory.mktemp("project")
    for name in ("pipeline", "stages"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dvc.yaml", "params.yaml", ".gitignore"):
        shutil.copy(ROOT / name, project / name)

    def tiny(params):
        for section, values in TINY.items():
            params[section].update(values)
        params["generations"] = params["generations"][:2]

    edit_params(project, tiny)
    run(["git", "init", "-q"], project)
    run(["dvc", "init", "-q"], project)
    shutil.copy(ROOT / ".dvcignore", project / ".dvcignore")
    return project


def test_pipeline_runs_incrementally_and_tracks_in_mlflow(project):
    first = repro(project)
    assert first == {"init", "selfplay@0", "train@0", "gate@0", "selfplay@1", "train@1", "gate@1", "evaluate", "report"}
    for path in (
        "models/best/gen_2.ckpt",
        "metrics/evaluate.json",
        "reports/report.md",
        "reports/report.html",
        "reports/fig3b.png",
    ):
        assert (project / path).exists(), path
    assert not list((project / "data/selfplay").glob("*.parts")), "self-play deletes its parts once it is done"
    assert not list((project / "models/candidate").glob("*.fit")), "training deletes its saved fit once it is done"

    assert json.loads((project / "metrics/summary.json").read_text())["champion_gen"] == 2
    shown = run(["dvc", "metrics", "show"], project).stdout.splitlines()
    assert len(shown) == 2 and shown[1].startswith("metrics/summary.json"), "one narrow row of headline numbers"
    run(["dvc", "plots", "show", "--out", "plots_html"], project)
    page = (project / "plots_html/index.html").read_text()
    assert "<script" not in page and page.count("<img") == 7, "the plots render without the internet"
    shutil.rmtree(project / "plots_html")

    assert repro(project) == set(), "a second run with nothing changed must do nothing"

    leftover = project / "data/matches/.0123abcd.json.k2j3h4g5.tmp"  # what a `kill -9` mid-write leaves
    leftover.write_text("{")
    edit_params(project, lambda p: p["generations"].append({"gen": 3, "prev": 2}))
    assert repro(project) == {"selfplay@2", "train@2", "gate@2", "evaluate", "report"}
    assert not leftover.exists(), "the evaluate stage removes leftovers of killed writes"
    assert "up to date" in run(["dvc", "status"], project).stdout

    cached = set((project / "data/matches").glob("*.json"))
    edit_params(project, lambda p: p["evaluate"]["fig3"].update(games_per_seating=2))
    assert repro(project) == {"evaluate", "report"}
    added = set((project / "data/matches").glob("*.json")) - cached
    assert cached <= set((project / "data/matches").glob("*.json")), "finished matches survive a re-run"
    assert len(added) == 4, "only the changed fig. 3 matches (2 levels x 2 subjects) are played again"

    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("alphazero")
    parents = client.search_runs([experiment.experiment_id], "tags.game = 'tictacmo'")
    assert len(parents) == 1
    parent = parents[0]
    assert parent.data.params["search.c_puct"] == "3.0"
    gate_steps = {m.step for m in client.get_metric_history(parent.info.run_id, "gate_score")}
    assert gate_steps == {1, 2, 3}
    losses = client.get_metric_history(parent.info.run_id, "train_policy_loss")
    assert len({m.step for m in losses}) == 3 and all(m.value > 0 for m in losses)
    children = client.search_runs([experiment.experiment_id], f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert {"selfplay-gen1", "train-gen3", "gate-gen2", "evaluate-gen3", "report-gen3"} <= {
        r.info.run_name for r in children
    }
    artifacts = {a.path for a in client.list_artifacts(parent.info.run_id, "report")}
    assert {"report/report.md", "report/report.html"} <= artifacts
    assert "champion/gen_3.ckpt" in {a.path for a in client.list_artifacts(parent.info.run_id, "champion")}
    champion = client.get_model_version_by_alias("alphazero-champion", "champion")
    assert client.get_run(champion.run_id).info.run_name == "gate-gen3"


def test_bad_params_stop_a_stage_with_one_line(project):
    edit_params(project, lambda p: p["search"].update(c_puct="high"))
    try:
        result = run([sys.executable, "-m", "stages.selfplay", "9", "2"], project, check=False)
    finally:
        edit_params(project, lambda p: p["search"].update(c_puct=3.0))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "error: params.yaml: search.c_puct: Input should be a valid number, "
        "unable to parse string as a number (got 'high')"
    ]
    assert not (project / "data/selfplay/gen_9.npz").exists()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("connect4", "Seed 000 experiments"),
        ("pig(players=2,goal=12)", "Oracle: two-player Pig"),  # dice: chance nodes, oracle evaluation
        ("openspiel:pig(players=3,winscore=12)", "Seed 000 experiments"),  # the OpenSpiel adapter, three players
    ],
)
def test_switching_the_game_needs_no_other_change(project, spec, expected):
    if spec.startswith("openspiel:"):
        pytest.importorskip("pyspiel")
    edit_params(project, lambda p: p.update(game=spec))
    try:
        ran = repro(project)
    finally:
        edit_params(project, lambda p: p.update(game="tictacmo"))
    assert "init" in ran and "report" in ran
    report = (project / "reports/report.md").read_text()
    assert spec in report and expected in report
