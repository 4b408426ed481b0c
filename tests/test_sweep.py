"""The sweep machinery on tiny real budgets: a study in SQLite with its MLflow parent and child runs,
resuming, the report and its params file, two objectives, worker processes on one storage (killed
ones included), passwords kept out of what is logged, and bad sweep params refused."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import pytest
import yaml
from mlflow import MlflowClient
from tiny_params import tiny_tictactoe
from tqdm import tqdm

from pipeline.commands import sweep as sweep_command
from pipeline.config import ConfigError, load_params, parse_params
from pipeline.games import make_game
from pipeline.harness.tracking import tracking_uri
from pipeline.sweeps import confirmation
from pipeline.sweeps import storage as sweep_storage
from pipeline.sweeps.space import trial_params, with_overrides
from pipeline.sweeps.storage import RUN_ID, WORKER, fail_lost_trials, open_storage, resolve_storage
from pipeline.sweeps.study import (
    BASELINE,
    Objective,
    best_trial,
    open_study,
    panel_specs,
    prepare_study,
    versus_baseline,
)
from pipeline.sweeps.training_loop import train_generations
from pipeline.sweeps.training_report import compute_lines, write_best_params, write_report
from pipeline.sweeps.workers import parent_run, run_worker

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset

ROOT = Path(__file__).resolve().parents[1]
RUNNING, FAIL = optuna.trial.TrialState.RUNNING, optuna.trial.TrialState.FAIL
COMPLETE, WAITING = optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.WAITING
SPACE = {"search.c_puct": optuna.distributions.FloatDistribution(0.5, 5.0, log=True)}


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MLflow keeps artifacts beside the working directory


def tiny_params(folder: Path, **sweep) -> Path:
    data = tiny_tictactoe(folder)
    data["sweep"] = {
        "study": "tiny",
        "trials": 3,
        "generations": 2,
        "panel": ["random", "uct:4"],
        "games_per_seating": 1,
        "eval_simulations": 4,
        "space": {
            "search.c_puct": {"low": 0.5, "high": 5.0, "log": True},
            "search.simulations": {"low": 2, "high": 8},
        },
        **sweep,
    }
    path = folder / "params.yaml"
    path.write_text("# tiny sweep params\n" + yaml.safe_dump(data, sort_keys=False))
    return path


def sweep_runs(folder: Path, study: str):
    client = MlflowClient(tracking_uri=f"sqlite:///{folder / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("alphazero-sweeps")
    runs = client.search_runs([experiment.experiment_id], f"tags.sweep_study = '{study}'", max_results=1000)
    parents = [r for r in runs if r.data.tags.get("sweep_role") == "parent"]
    children = [r for r in runs if "optuna_trial" in r.data.tags]
    return client, parents, children


def test_a_study_trains_measures_tracks_resumes_and_reports(tmp_path, capsys):
    params_path = tiny_params(tmp_path)
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    run_worker(str(params_path), storage, trials=3)
    progress = capsys.readouterr().err  # to a log file, as `nohup ... > sweep.log` writes it: lines, no '\r'
    assert "\r" not in progress and "sweep worker 0: 100%" in progress.splitlines()[-1]
    study = open_study(load_params(params_path), open_storage(storage))
    trials = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(trials) == 3
    # the first trial runs params.yaml's own values: the baseline the tuned params must beat
    assert trials[0].user_attrs[BASELINE] and trials[0].params == {"search.c_puct": 3.0, "search.simulations": 4}
    assert all(0 <= t.value <= 1 for t in trials)
    assert all(sorted(t.intermediate_values) == [1, 2] for t in trials)

    client, parents, children = sweep_runs(tmp_path, "tiny")
    assert [p.info.status for p in parents] == ["FINISHED"]  # the study is
    assert sorted(int(r.data.tags["optuna_trial"]) for r in children) == [0, 1, 2]
    for trial in trials:
        run = client.get_run(trial.user_attrs["mlflow_run_id"])
        assert run.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
        assert float(run.data.params["search.c_puct"]) == pytest.approx(trial.params["search.c_puct"])
        assert [m.step for m in client.get_metric_history(run.info.run_id, "strength")] == [1, 2]
        assert run.data.metrics["strength"] == pytest.approx(trial.value)

    run_worker(str(params_path), storage, trials=4)  # resuming adds exactly the missing trial, a new one
    complete = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(complete) == 4 and complete[3].params not in [t.params for t in complete[:3]]
    assert [p.info.run_id for p in sweep_runs(tmp_path, "tiny")[1]] == [parents[0].info.run_id]  # the same parent

    params = load_params(params_path)
    versus = versus_baseline(study, params, games_per_seating=1)
    assert versus["games"] == 2 and 0 <= versus["score"] <= 1  # both seatings of two players, once
    report = write_report(study, params, params_path, tmp_path / "report")
    best = best_trial(study)
    tuned = load_params(tmp_path / "report" / "best_params.yaml")
    assert tuned.search.c_puct == pytest.approx(best.params["search.c_puct"])
    assert tuned.search.simulations == best.params["search.simulations"]
    assert tuned.selfplay.games == trial_params(params, best.params).selfplay.games
    assert "# tiny sweep params" in (tmp_path / "report" / "best_params.yaml").read_text()  # comments kept
    for name in ("history.png", "importances.png", "slices.png", "intermediate.png", "trials.csv"):
        assert (tmp_path / "report" / name).stat().st_size > 0
    assert "dvc exp run -S search.c_puct=" in report.read_text()
    assert "Compute: 8 generations trained (8 in complete trials)." in report.read_text()  # 4 trials of 2
    table = report.read_text().split("## Trials, strongest first")[1]
    assert "| `search.c_puct` | `search.simulations` |" in table and "| 0 (baseline) | complete |" in table
    assert all(f"| {t.number}" in table and f"| {t.params['search.c_puct']:.4g} |" in table for t in complete)


def test_confirmation_retrains_the_top_settings_from_fresh_seeds_and_recommends_what_survives(tmp_path):
    params_path = tiny_params(tmp_path, trials=3, confirm={"top": 1, "seeds": 2, "games_per_seating": 1})
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    run_worker(str(params_path), storage, trials=3)
    params = load_params(params_path)
    study = open_study(params, open_storage(storage))
    run_worker(str(params_path), storage, trials=3, prepare=confirmation.prepare)
    confirm = confirmation.open_confirmation(open_storage(storage), "tiny")
    units = confirm.get_trials(states=(COMPLETE,))
    best = max(
        (t for t in study.get_trials(states=(COMPLETE,)) if not t.user_attrs.get(BASELINE)), key=lambda t: t.value
    )
    settings = {("baseline", 1), ("baseline", 2), (f"trial {best.number}", 1), (f"trial {best.number}", 2)}
    assert {(t.user_attrs[confirmation.SETTING], t.user_attrs["training_seed"]) for t in units} == settings
    assert all(t.params == best.params for t in units if t.user_attrs[confirmation.SETTING] != "baseline")
    client, parents, children = sweep_runs(tmp_path, "tiny")
    runs = {r.info.run_id: r for r in children}
    for unit in units:  # each unit is a child of the study's parent, its seed logged
        run = runs[unit.user_attrs["mlflow_run_id"]]
        assert run.data.params["seed"] == str(unit.user_attrs["training_seed"])
        assert run.data.tags["mlflow.parentRunId"] == parents[0].info.run_id
    out = tmp_path / "report"  # the command: no unit runs again, the head-to-heads, the report
    sweep_command.main(["--params", str(params_path), "--storage", storage, "--confirm", "--out", str(out)])
    figures = json.loads((out / "confirmation.json").read_text())
    ((setting, result),) = figures["candidates"].items()
    assert setting == f"trial {best.number}" and result["games"] == 2 * 2 * 2  # 2 x 2 networks, 2 seatings
    assert result["ci95_low"] <= result["score"] <= result["ci95_high"] and result["seeds"] == 2
    assert figures["recommended"] in (setting, "baseline")
    assert json.loads(json.dumps(confirmation.confirm(params, confirm))) == figures  # the same games again
    assert len(confirm.get_trials()) == 4
    text = (out / "report.md").read_text()
    assert text.index("## Confirmation") < text.index("## Recommended: ")
    assert "The confirmation trained 4 networks more, 8 generations (2 each)." in text  # 2 settings x 2 seeds
    if figures["recommended"] == "baseline":  # nothing beat it: the report does not call that a confirmation
        assert "## Recommended: the baseline (no setting's interval lay above it" in text
    recommended = load_params(out / "best_params.yaml")
    expected = best.params["search.c_puct"] if figures["recommended"] == setting else 3.0
    assert recommended.search.c_puct == pytest.approx(expected)
    parent = sweep_runs(tmp_path, "tiny")[1][0]
    assert parent.data.tags["confirmed_setting"] == figures["recommended"]  # the effect, on the study's run
    assert ("confirmed_score" in parent.data.metrics) == (figures["recommended"] != "baseline")


def test_ablation_retrains_the_best_setting_with_each_tuned_param_put_back_and_never_recommends_it(tmp_path):
    params_path = tiny_params(
        tmp_path, trials=3, confirm={"top": 1, "seeds": 1, "games_per_seating": 1, "ablate": True}
    )
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    run_worker(str(params_path), storage, trials=3)
    study = open_study(load_params(params_path), open_storage(storage))
    (_, base), (best, values), *ablations = confirmation.candidates(study, 1, ablate=True)
    differing = sorted(path for path in values if values[path] != base[path])
    assert [setting for setting, _ in ablations] == [f"{best} without {path}" for path in differing]
    for (_, ablated), path in zip(ablations, differing):
        assert ablated == {**values, path: base[path]}
    out = tmp_path / "report"
    sweep_command.main(["--params", str(params_path), "--storage", storage, "--confirm", "--out", str(out)])
    figures = json.loads((out / "confirmation.json").read_text())
    assert set(figures["candidates"]) == {best, *(setting for setting, _ in ablations)}
    assert " without " not in figures["recommended"]
    text = (out / "report.md").read_text()
    assert f"### Which param carries the effect: {best} with each tuned param put back" in text
    assert all(f"| {path} | " in text for path in differing)


def test_the_interval_covers_training_seeds_not_only_games():
    steady = {(a, b): np.full(50, 0.6) for a in range(3) for b in range(3)}
    assert confirmation.bootstrap_interval(steady, [0]) == pytest.approx((0.6, 0.6))
    # one lucky training seed: many games each, yet the interval stays wide, as the seeds disagree
    lucky = {(a, b): np.full(200, 0.9 if a == 0 else 0.45) for a in range(3) for b in range(3)}
    low, high = confirmation.bootstrap_interval(lucky, [0])
    assert low < 0.5 < 0.8 < high


def test_best_params_file_differs_from_params_yaml_only_in_the_tuned_lines(tmp_path):
    values = {"search.c_puct": 1.25, "workers": 1, "evaluate.fig3.games_per_seating": 7}
    write_best_params(ROOT / "params.yaml", values, tmp_path / "best.yaml")
    before = (ROOT / "params.yaml").read_text().splitlines()
    after = (tmp_path / "best.yaml").read_text().splitlines()
    changed = [(old.split("#")[0].strip(), new.split("#")[0].strip()) for old, new in zip(before, after) if old != new]
    assert len(before) == len(after)
    assert changed == [
        ("workers: 0", "workers: 1"),
        ("c_puct: 3.0", "c_puct: 1.25"),
        ("games_per_seating: 20", "games_per_seating: 7"),
    ]
    assert load_params(tmp_path / "best.yaml").evaluate.fig3.games_per_seating == 7


def test_every_trial_spends_the_same_selfplay_evaluations_per_generation(tmp_path):
    params = load_params(tiny_params(tmp_path))
    assert trial_params(params, {"search.simulations": 8}).selfplay.games == 2  # 4 games x 4 rollouts
    assert trial_params(params, {"search.simulations": 2}).selfplay.games == 8
    assert trial_params(params, {"search.simulations": 2, "selfplay.games": 5}).selfplay.games == 5


@pytest.mark.parametrize("simulations", [2, 12])
def test_a_budget_in_simulations_makes_games_follow_the_game_length(tmp_path, simulations):
    """Rescaled games equalise simulations only at equal game lengths; with the budget each generation
    after the first plays the games that bring the sum to the budget so far, whatever the length."""
    params = trial_params(
        load_params(tiny_params(tmp_path, simulations_per_generation=600)), {"search.simulations": simulations}
    )
    reports = []
    train_generations(make_game("tictactoe"), params, 3, lambda model, report: reports.append(report), 600)
    assert reports[0].games == params.selfplay.games, "the first generation plays the rescaled games"
    for report in reports[1:]:
        assert abs(report.simulations - 600 * report.generation) < 0.25 * 600
    assert abs(reports[-1].simulations - 1800) < 0.1 * 1800


def test_overrides_reach_top_level_and_nested_params_and_are_validated(tmp_path):
    params = load_params(tiny_params(tmp_path))
    changed = with_overrides(params, {"workers": 2, "search.c_puct": 1.5})
    assert (changed.workers, changed.search.c_puct, params.search.c_puct) == (2, 1.5, 3.0)
    with pytest.raises(ConfigError, match="sweep trial params: search.simulations"):
        with_overrides(params, {"search.simulations": 0})


@pytest.mark.parametrize("pruner", ["median", "hyperband"])
def test_no_trial_is_pruned_on_its_first_generation(tmp_path, pruner):
    """The first network is barely trained: its panel score is noise, so only later ones may prune."""
    params = load_params(tiny_params(tmp_path, pruner=pruner, generations=3))
    study = open_study(params, optuna.storages.InMemoryStorage())
    for value in (0.9, 0.8, 0.9, 0.8, 0.9, 0.8):
        trial = study.ask()
        for generation in (1, 2, 3):
            trial.report(value, generation)
        study.tell(trial, value)
    weak = study.ask()
    weak.report(0.0, 1)
    assert not weak.should_prune()
    if pruner == "median":  # Hyperband's second rung depends on the trial's bracket
        weak.report(0.0, 2)
        assert weak.should_prune()


def test_a_pruned_trial_ends_its_mlflow_run_killed_and_tagged(tmp_path):
    params = load_params(tiny_params(tmp_path, generations=2))
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    study = open_study(params, open_storage(storage))
    study.pruner = optuna.pruners.ThresholdPruner(lower=1.5)  # strength is at most 1: always pruned
    parent = parent_run(params, study, storage)
    study.optimize(Objective(params, parent, tqdm(disable=True)), n_trials=1)
    trial = study.trials[0]
    assert trial.state == optuna.trial.TrialState.PRUNED and list(trial.intermediate_values) == [1]
    client, _, children = sweep_runs(tmp_path, "tiny")
    assert len(children) == 1
    run = client.get_run(children[0].info.run_id)
    assert (run.info.status, run.data.tags["optuna_state"]) == ("KILLED", "PRUNED")
    assert [m.step for m in client.get_metric_history(run.info.run_id, "strength")] == [1]


def test_the_report_counts_every_generation_trained_pruned_and_lost_trials_included():
    """A pruned study is compared with a plain one at equal compute: what a trial spent counts, however it ended."""
    state = optuna.trial.TrialState
    trials = [
        optuna.trial.create_trial(state=state.COMPLETE, value=0.6, intermediate_values={1: 0.5, 2: 0.6}),
        optuna.trial.create_trial(state=state.PRUNED, intermediate_values={1: 0.1}),
        optuna.trial.create_trial(state=state.FAIL, intermediate_values={1: 0.3, 2: 0.2}),
        optuna.trial.create_trial(state=state.FAIL),
    ]
    spent = "Compute: 5 generations trained (2 in complete trials, 1 in pruned trials, 2 in failed trials)."
    assert compute_lines(trials)[-1] == spent
    assert compute_lines(trials[3:]) == []


def test_a_silent_workers_trial_is_failed_after_its_heartbeat_and_retried_with_its_params(tmp_path, monkeypatch):
    """A worker on another host cannot be looked up: a missed heartbeat fails its trial."""
    monkeypatch.setattr(sweep_storage, "HEARTBEAT_SECONDS", 1)
    monkeypatch.setattr(sweep_storage, "GRACE_SECONDS", 2)  # stale after 2 s, not a minute
    params_path = tiny_params(tmp_path, generations=1)
    storage_url = f"sqlite:///{tmp_path / 'sweep.db'}"
    storage = open_storage(storage_url)
    study = open_study(load_params(params_path), storage)
    space = {"search.c_puct": optuna.distributions.FloatDistribution(0.5, 5.0, log=True)}
    lost = study.ask(space)  # a worker that started this trial, sent one heartbeat and died
    storage.record_heartbeat(lost._trial_id)
    time.sleep(4)
    run_worker(str(params_path), storage_url, trials=1)
    stale, retried = study.get_trials()
    assert stale.state == optuna.trial.TrialState.FAIL
    assert retried.state == optuna.trial.TrialState.COMPLETE
    assert optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(retried) == stale.number
    assert retried.params["search.c_puct"] == stale.params["search.c_puct"]


def test_two_objectives_strength_and_compute_without_pruning(tmp_path):
    params_path = tiny_params(tmp_path, objective="strength_and_compute", trials=2, generations=1)
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    run_worker(str(params_path), storage, trials=2)
    study = open_study(load_params(params_path), open_storage(storage))
    assert len(study.directions) == 2
    assert all(len(t.values) == 2 and t.values[1] > 0 for t in study.trials)
    write_report(study, load_params(params_path), params_path, tmp_path / "report")
    assert (tmp_path / "report" / "pareto.png").exists()


def test_two_worker_processes_share_one_journal_storage(tmp_path):
    """Two independent workers (as on two machines) against one journal file: every trial finishes
    once, under one MLflow parent run, with its own child run."""
    params_path = tiny_params(tmp_path, trials=4, generations=1)
    storage = f"journal:{tmp_path / 'journal.log'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pipeline", "sweep", "--params", str(params_path), "--storage", storage]
    workers = [
        subprocess.Popen([*command, "--worker", str(i)], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    for worker in workers:
        _, errors = worker.communicate(timeout=600)
        assert worker.returncode == 0, errors
    study = open_study(load_params(params_path), open_storage(storage))
    trials = study.get_trials()
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    assert 4 <= len(trials) <= 5  # both workers may start a trial when three are done
    assert sorted(t.number for t in trials) == list(range(len(trials)))
    client, parents, children = sweep_runs(tmp_path, "tiny")
    assert len(parents) == 1
    reported = [a.path for a in client.list_artifacts(parents[0].info.run_id, "tiny")]
    assert "tiny/report.md" in reported and "tiny/best_params.yaml" in reported  # the report, in MLflow
    assert sorted(r.info.run_id for r in children) == sorted(t.user_attrs["mlflow_run_id"] for t in trials)
    assert {r.data.tags["mlflow.parentRunId"] for r in children} == {parents[0].info.run_id}


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ({"space": {"search.cpuct": {"low": 1, "high": 2}}}, "'search.cpuct' names no single param"),
        ({"space": {"train.augment": {"low": 0, "high": 1}}}, "'train.augment' takes choices, not a range"),
        ({"space": {"search.c_puct": {"low": 3, "high": 2}}}, "sweep.space.search.c_puct: give low <= high"),
        ({"pruner": "asha"}, "sweep.pruner: unknown value 'asha'"),
        ({"space": {"search.c_puct": {"low": 0, "high": 2, "log": True}}}, "needs low > 0, got 0"),
        (
            {"simulations_per_generation": 500, "space": {"selfplay.games": {"low": 2, "high": 8}}},
            "'selfplay.games' is set by sweep.simulations_per_generation",
        ),
    ],
)
def test_bad_sweep_params_give_one_line_naming_the_field(tmp_path, sweep, message):
    data = yaml.safe_load(tiny_params(tmp_path).read_text())
    data["sweep"].update(sweep)
    with pytest.raises(ConfigError, match=message) as err:
        parse_params(data)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        ({"search.c_puct": {"low": -5, "high": -1}}, "sweep.space: 'search.c_puct' = -5 is not a valid value"),
        ({"search.c_puct": {"choices": ["bogus"]}}, "sweep.space: 'search.c_puct' = 'bogus' is not a valid value"),
    ],
)
def test_a_space_the_params_refuse_is_one_line_before_any_trial(tmp_path, capsys, space, message):
    params_path = tiny_params(tmp_path, space=space)
    with pytest.raises(SystemExit):
        sweep_command.main(["--params", str(params_path), "--storage", f"sqlite:///{tmp_path / 'sweep.db'}"])
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and message in error, error
    assert not (tmp_path / "sweep.db").exists()


def test_an_unknown_panel_opponent_is_refused(tmp_path):
    params = load_params(tiny_params(tmp_path, panel=["uct:4", "minimax"]))
    with pytest.raises(
        ConfigError,
        match=r"^sweep.panel\[1\]: unknown player 'minimax'; expected uct:N, mce:N, greedy or random "
        r"\(tictactoe brings no players of its own\)$",
    ):
        panel_specs(params)


def storage_url(tmp_path: Path, kind: str) -> str:
    return f"sqlite:///{tmp_path / 'sweep.db'}" if kind == "sqlite" else f"journal:{tmp_path / 'journal.log'}"


def start_sweep(params_path: Path, storage: str, *args: str) -> subprocess.Popen:
    """`python -m pipeline sweep` as a user starts it, in its own process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "pipeline", "sweep", "--params", str(params_path), "--storage", storage, *args]
    return subprocess.Popen(command, cwd=params_path.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def running_trial(study: optuna.Study, sweep: subprocess.Popen) -> optuna.trial.FrozenTrial:
    """Wait until a trial runs with its MLflow run open: the moment to kill its worker."""
    while not (running := [t for t in study.get_trials(states=(RUNNING,)) if RUN_ID in t.user_attrs]):
        assert sweep.poll() is None, sweep.communicate()
        time.sleep(0.2)
    return running[0]


def retries_of(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> list[optuna.trial.FrozenTrial]:
    retried = optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number
    return [t for t in study.get_trials() if retried(t) == trial.number]


def assert_accounted_for(study, lost, folder: Path, trials: int) -> None:
    """Every trial COMPLETE or FAIL-and-retried, none RUNNING; the MLflow runs end as Optuna holds them."""
    assert [t.number for t in study.get_trials() if t.state == RUNNING] == []
    assert len(study.get_trials(states=(COMPLETE,))) >= trials
    assert study.trials[lost.number].state == FAIL
    (retry,) = retries_of(study, lost)
    assert retry.state == COMPLETE and retry.params == lost.params
    assert retry.user_attrs[RUN_ID] != lost.user_attrs[RUN_ID]
    client, parents, children = sweep_runs(folder, "tiny")
    assert [p.info.status for p in parents] == ["FINISHED"]
    lost_run = client.get_run(lost.user_attrs[RUN_ID])
    assert (lost_run.info.status, lost_run.data.tags["optuna_state"]) == ("FAILED", "FAIL")
    assert {r.info.status for r in children} == {"FINISHED", "FAILED"}


def test_a_terminated_sweep_exits_with_sigterms_status_not_success(tmp_path):
    """Lightning turns SIGTERM into exit status 0; `sweep && sweep --confirm` must not go on."""
    params_path = tiny_params(tmp_path, trials=2, generations=2)
    storage = storage_url(tmp_path, "sqlite")
    sweep = start_sweep(params_path, storage)
    running_trial(open_study(load_params(params_path), open_storage(storage)), sweep)
    sweep.send_signal(signal.SIGTERM)
    _, err = sweep.communicate()
    assert sweep.returncode == 143 and "\nterminated\n" in err.decode()


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_a_worker_killed_mid_trial_leaves_a_trial_that_a_rerun_fails_and_retries_at_once(tmp_path, kind):
    params_path = tiny_params(tmp_path, trials=2, generations=2)
    storage = storage_url(tmp_path, kind)
    sweep = start_sweep(params_path, storage)
    study = open_study(load_params(params_path), open_storage(storage))
    lost = running_trial(study, sweep)
    sweep.send_signal(signal.SIGKILL)
    sweep.communicate()
    run_worker(str(params_path), storage, trials=2)  # well inside the heartbeat's grace: its worker is known dead
    assert_accounted_for(study, lost, tmp_path, trials=2)


def test_a_confirmation_killed_mid_unit_resumes_and_retrains_the_lost_unit_with_its_setting_and_seed(tmp_path):
    """`sweep --confirm` killed with SIGKILL while a unit trains: the rerun fails that unit, retrains it
    with the same setting, params and training seed, and confirms from every unit exactly once."""
    params_path = tiny_params(tmp_path, trials=2, confirm={"top": 1, "seeds": 2, "games_per_seating": 1})
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    run_worker(str(params_path), storage, trials=2)
    sweep = start_sweep(params_path, storage, "--confirm", "--out", str(tmp_path / "first"))
    confirm = confirmation.open_confirmation(open_storage(storage), "tiny")
    lost = running_trial(confirm, sweep)
    sweep.send_signal(signal.SIGKILL)
    sweep.communicate()
    out = tmp_path / "report"
    sweep_command.main(["--params", str(params_path), "--storage", storage, "--confirm", "--out", str(out)])
    units = confirm.get_trials()
    assert [t.number for t in units if t.state == FAIL] == [lost.number]
    (retry,) = retries_of(confirm, lost)
    assert retry.state == COMPLETE and retry.params == lost.params
    keys = (confirmation.SETTING, confirmation.TRAINING_SEED)
    assert [retry.user_attrs[k] for k in keys] == [lost.user_attrs[k] for k in keys]
    complete = [(t.user_attrs[confirmation.SETTING], t.user_attrs[confirmation.TRAINING_SEED]) for t in units
                if t.state == COMPLETE]  # fmt: skip
    assert len(complete) == len(set(complete)) == 4, "two settings x two seeds, each trained once to the end"
    figures = json.loads((out / "confirmation.json").read_text())
    assert figures["recommended"] in (*figures["candidates"], "baseline")


def test_jobs_on_a_new_sqlite_database_finish_the_study_when_one_is_killed_and_name_it(tmp_path):
    params_path = tiny_params(tmp_path, trials=3, generations=2)
    storage = storage_url(tmp_path, "sqlite")
    sweep = start_sweep(params_path, storage, "--jobs", "2")
    while not (tmp_path / "sweep.db").exists():
        assert sweep.poll() is None, sweep.communicate()
        time.sleep(0.2)
    study = open_study(load_params(params_path), open_storage(storage))
    lost = running_trial(study, sweep)
    os.kill(int(lost.user_attrs[WORKER].split(":")[1]), signal.SIGKILL)
    out, err = sweep.communicate(timeout=900)
    assert sweep.returncode == 1, err.decode()
    assert b"report: sweeps/tiny/report.md" in out  # the survivor finished the study; the report says so
    assert "was killed by SIGKILL; run the command again to finish the study" in err.decode()
    assert_accounted_for(study, lost, tmp_path, trials=3)


RACE = """
import pathlib, sys, time
from pipeline.sweeps.storage import open_storage
print("ready", flush=True)
while not pathlib.Path(sys.argv[2]).exists():
    time.sleep(0.001)
open_storage(sys.argv[1])
"""


def test_workers_opening_a_new_sqlite_database_together_create_its_tables_once(tmp_path):
    """Without a lock both create the schema and one dies on `UNIQUE constraint failed: alembic_version`."""
    go = tmp_path / "go"
    command = [sys.executable, "-c", RACE, storage_url(tmp_path, "sqlite"), str(go)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    workers = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    for worker in workers:
        assert worker.stdout.readline() == b"ready\n", worker.communicate()
    go.touch()
    for worker in workers:
        _, errors = worker.communicate(timeout=300)
        assert worker.returncode == 0, errors.decode()


def dead_owner() -> str:
    """The owner record of a real process, killed with SIGKILL."""
    code = "import time; from pipeline.plumbing.owners import current; print(current(), flush=True); time.sleep(600)"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    owner = process.stdout.readline().strip()
    process.kill()
    process.communicate()
    return owner


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_only_trials_of_dead_or_silent_workers_are_failed_and_retried_once_without_their_attrs(tmp_path, kind):
    from pipeline.plumbing.owners import current

    storage = storage_url(tmp_path, kind)
    study = optuna.create_study(study_name="lost", storage=open_storage(storage))
    trials = {name: study.ask(SPACE) for name in ("dead", "alive", "elsewhere", "silent")}
    owner = {"dead": dead_owner(), "alive": current(), "elsewhere": "elsewhere:1:1", "silent": "elsewhere:2:1"}
    for name, trial in trials.items():
        trial.set_user_attr(WORKER, owner[name])
        trial.set_user_attr(RUN_ID, f"run of {name}")
        study._storage.record_heartbeat(trial._trial_id)
    silent = trials["silent"]._trial_id
    if kind == "sqlite":  # the database's clock: a beat an hour ago
        with open_storage(storage).engine.begin() as connection:
            connection.exec_driver_sql(
                f"UPDATE trial_heartbeats SET heartbeat = datetime('now', '-1 hour') WHERE trial_id = {silent}"
            )
    else:
        study._storage.set_trial_system_attr(silent, "heartbeat", time.time() - 3600)
    for _ in range(2):  # a second look retries nothing more
        fail_lost_trials(study, storage)
    states = {name: study.trials[trial.number].state for name, trial in trials.items()}
    assert states == {"dead": FAIL, "alive": RUNNING, "elsewhere": RUNNING, "silent": FAIL}
    retries = study.get_trials(states=(WAITING,))
    retried = optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number
    assert sorted(retried(t) for t in retries) == [trials["dead"].number, trials["silent"].number]
    assert all(t.user_attrs == {} for t in retries)  # the lost attempt's worker and run are not inherited


def test_two_studies_with_one_name_get_a_parent_run_each(tmp_path):
    params = load_params(tiny_params(tmp_path))
    first, second = storage_url(tmp_path, "journal"), f"journal:{tmp_path / 'other.log'}"
    parents = [parent_run(params, prepare_study(params, url), url) for url in (first, second, first)]
    assert parents[0] != parents[1] and parents[2] == parents[0]


def test_passwords_are_masked_in_logged_params_best_params_and_error_lines(tmp_path, capsys):
    secret = "postgresql://sweeper:s3cret@127.0.0.1:9/optuna"
    params_path = tiny_params(tmp_path, storage=secret)
    params = load_params(params_path)
    client = MlflowClient(tracking_uri(params))
    run = client.get_run(parent_run(params, prepare_study(params, storage_url(tmp_path, "journal")), secret))
    assert run.data.params["storage"] == "postgresql://sweeper:***@127.0.0.1:9/optuna"
    write_best_params(params_path, {"search.c_puct": 1.0}, tmp_path / "best.yaml")
    best = (tmp_path / "best.yaml").read_text()
    assert "s3cret" not in best and "sweeper:***@127.0.0.1" in best
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        sweep_command.main(["--params", str(params_path)])  # no psycopg here, or no server there
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 1 and len(lines) == 1 and "s3cret" not in lines[0]
    assert lines[0].startswith("error: storage postgresql://sweeper:***@127.0.0.1:9/optuna: ")


def test_urls_come_from_the_environment_where_params_leave_them_null(tmp_path, monkeypatch):
    params = load_params(tiny_params(tmp_path))
    params = with_overrides(params, {"tracking.tracking_uri": None})
    monkeypatch.setenv("OPTUNA_STORAGE", "postgresql://sweeper@db/optuna")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://mlflow.example:5000")
    assert resolve_storage(None, params) == "postgresql://sweeper@db/optuna"
    assert resolve_storage("journal:sweep.log", params) == "journal:sweep.log"
    assert tracking_uri(params) == "http://mlflow.example:5000"


def test_a_report_of_a_new_study_leaves_no_parent_run_running(tmp_path):
    params_path = tiny_params(tmp_path)
    sweep_command.main(["--params", str(params_path), "--storage", storage_url(tmp_path, "sqlite"), "--report-only"])
    _, parents, _ = sweep_runs(tmp_path, "tiny")
    assert [parent.info.status for parent in parents] == ["FINISHED"]


@pytest.mark.parametrize("option", [["--jobs", "0"], ["--jobs", "-1"], ["--trials", "-3"]])
def test_no_workers_or_a_negative_trial_count_is_refused_in_one_line_before_anything_opens(tmp_path, capsys, option):
    params_path = tiny_params(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        sweep_command.main(["--params", str(params_path), "--storage", storage_url(tmp_path, "sqlite"), *option])
    assert stopped.value.code == 1
    assert capsys.readouterr().err.splitlines() == [f"error: {option[0]}: expected a positive integer, got {option[1]}"]
    assert not (tmp_path / "sweep.db").exists() and not (tmp_path / "mlflow.db").exists()


def test_a_panel_interval_over_few_seeds_stays_within_a_scores_range():
    from pipeline.sweeps.confirmation import seed_interval

    mean, low, high = seed_interval([0.05, 0.95, 0.5])  # three seeds far apart: t reaches past 0 and 1
    assert (mean, low, high) == (0.5, 0.0, 1.0)
    assert 0.0 < seed_interval([0.6, 0.62, 0.64])[1] < 0.6 < seed_interval([0.6, 0.62, 0.64])[2] < 1.0


def test_a_report_recommends_only_what_was_tuned_and_the_games_simulations_imply(tmp_path):
    """Issue 83: a toy study's own self-play games were recommended beside its c_puct, and pasted into
    params.yaml they cut its self-play from 300 games to 24."""
    from pipeline.sweeps.training_report import implied_values

    params = load_params(tiny_params(tmp_path))
    assert implied_values(params, {"search.c_puct": 1.5}) == {"search.c_puct": 1.5}
    rescaled = implied_values(params, {"search.c_puct": 1.5, "search.simulations": 8})
    assert rescaled["selfplay.games"] == trial_params(params, {"search.simulations": 8}).selfplay.games
