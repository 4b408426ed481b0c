"""The play-time sweep on tiny real budgets: one fixed Tic-Tac-Toe network, its search settings tried on
the same games against a panel, pruned by successive halving, resumed after a kill, confirmed on fresh
seeds, reported with a `search:` block; bad spaces and panels refused in one line."""

import json
import re
import signal
from pathlib import Path

import optuna
import pytest
import torch
import yaml
from mlflow import MlflowClient
from test_sweep import retries_of, start_sweep

from pipeline.commands import sweep as sweep_command
from pipeline.config import ConfigError, load_params
from pipeline.games import make_game
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.sweeps import play
from pipeline.sweeps.storage import RUN_ID, open_storage
from pipeline.sweeps.study import BASELINE

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset

ROOT = Path(__file__).resolve().parents[1]
COMPLETE, PRUNED, FAIL = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED,
                          optuna.trial.TrialState.FAIL)  # fmt: skip


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MLflow keeps artifacts beside the working directory


def network(folder: Path) -> Path:
    """A small untrained network, the same one in every folder."""
    game = make_game("tictactoe")
    path = folder / "net.ckpt"
    torch.manual_seed(0)
    save_checkpoint(path, SENet(NetworkShape.for_game(game, 1, 8, 2)), game.name)
    return path


def play_params(folder: Path, **play_settings) -> Path:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data.update(game="tictactoe", workers=1)
    data["network"] = {"blocks": 1, "channels": 8, "se_reduction": 2}
    data["tracking"]["tracking_uri"] = f"sqlite:///{folder / 'mlflow.db'}"
    data["sweep"] = {
        "play": {
            "study": "tiny-play",
            "trials": 8,
            "simulations": 8,
            "panel": ["shipped", "uct:8"],
            "min_games": 2,
            "max_games": 8,
            "space": {
                "search.c_puct": {"low": 0.5, "high": 5.0, "log": True},
                "search.fpu_reduction": {"low": 0.0, "high": 1.0},
                "search.root": {"choices": ["puct", "gumbel"]},  # a choice: its report column as it is written
            },
            "confirm": {"top": 1, "games": 4},
            **play_settings,
        }
    }
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_study(folder: Path, *options: str) -> optuna.Study:
    params = play_params(folder)
    storage = f"sqlite:///{folder / 'sweep.db'}"
    sweep_command.main(["--play", str(network(folder)), "--params", str(params), "--storage", storage, *options])
    return optuna.load_study(study_name="tiny-play", storage=storage)


def test_a_play_study_plays_the_same_games_prunes_reports_and_confirms(tmp_path):
    study = run_study(tmp_path)
    trials = study.get_trials()
    shipped = {"search.c_puct": 3.0, "search.fpu_reduction": 0.0, "search.root": "puct"}
    assert trials[0].user_attrs[BASELINE] and trials[0].params == shipped
    assert len([t for t in trials if t.state in (COMPLETE, PRUNED)]) == 8
    assert any(t.state == PRUNED for t in trials), "successive halving stops some trials at a rung"
    for trial in trials:
        scores = play.trial_scores(trial)
        assert sorted(scores) == ["shipped", "uct:8"]
        games = {len(s) for s in scores.values()}
        assert len(games) == 1 and games <= ({8} if trial.state == COMPLETE else {2, 4}), trial.number
        assert all(s in (0.0, 0.5, 1.0) for member in scores.values() for s in member)
        assert trial.value == pytest.approx(play.figure(scores)["score"])
    report = (tmp_path / "sweeps" / "tiny-play" / "report.md").read_text()
    assert "```yaml\nsearch:\n  c_puct:" in report and "(not confirmed" in report
    assert re.search(r"^\| 0 \(shipped\) \|.* \| 3 \| 0 \| puct \|$", report, re.M), "the shipped row, its choice too"
    runs = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_runs(
        [MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").get_experiment_by_name("alphazero-sweeps").experiment_id]
    )
    assert {t.user_attrs[RUN_ID] for t in trials} <= {r.info.run_id for r in runs}

    study = run_study(tmp_path, "--confirm")
    figures = json.loads((tmp_path / "sweeps" / "tiny-play" / play.CONFIRMED).read_text())
    best = max((t for t in trials if t.state == COMPLETE and not t.user_attrs.get(BASELINE)), key=lambda t: t.value)
    assert sorted(figures["settings"]) == sorted(["shipped", f"trial {best.number}"])
    tuned = figures["settings"][f"trial {best.number}"]
    assert sorted(tuned["opponents"]) == ["shipped", "uct:8"]
    assert all(o["games"] == 4 for o in tuned["opponents"].values())
    assert tuned["difference_ci95_low"] <= tuned["difference"] <= tuned["difference_ci95_high"]
    assert figures["recommended"] in figures["settings"]
    assert "## Confirmation on fresh seeds" in (tmp_path / "sweeps" / "tiny-play" / "report.md").read_text()


def test_the_same_seed_gives_the_same_trials_and_figures(tmp_path):
    figures = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        study = run_study(tmp_path / name)
        figures.append([(t.params, t.state, play.trial_scores(t)) for t in study.get_trials()])
    assert figures[0] == figures[1]


def test_a_play_study_killed_mid_trial_resumes_and_retries_the_lost_trial_with_its_setting(tmp_path):
    params = play_params(tmp_path, trials=2, simulations=48, min_games=16, max_games=32, panel=["uct:64"])
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    net = network(tmp_path)
    sweep = start_sweep(params, storage, "--play", str(net))
    study = play.open_play_study(load_params(params), open_storage(storage), str(net))
    while not (running := [t for t in study.get_trials(states=(optuna.trial.TrialState.RUNNING,))
                           if RUN_ID in t.user_attrs]):  # fmt: skip
        assert sweep.poll() is None, sweep.communicate()
    sweep.send_signal(signal.SIGKILL)
    sweep.communicate()
    lost = running[0]
    sweep_command.main(["--play", str(net), "--params", str(params), "--storage", storage])
    assert study.trials[lost.number].state == FAIL
    (retry,) = retries_of(study, lost)
    assert retry.state in (COMPLETE, PRUNED) and retry.params == lost.params
    assert len([t for t in study.get_trials() if t.state in (COMPLETE, PRUNED)]) == 2


@pytest.mark.parametrize(
    "space, message",
    [
        ({"search.nope": {"low": 0, "high": 1}}, "sweep.play.space: 'search.nope': no such search setting"),
        ({"train.learning_rate": {"low": 1e-4, "high": 1e-2}}, "'train.learning_rate' is not a search setting"),
        ({"search.simulations": {"low": 8, "high": 64}}, "'search.simulations' is the budget"),
        ({"search.dirichlet_alpha": {"low": 0.1, "high": 2.0}}, "'search.dirichlet_alpha' is root noise"),
    ],
)
def test_a_space_that_is_not_search_settings_is_one_line_naming_it(tmp_path, space, message):
    params = play_params(tmp_path, space=space)
    with pytest.raises(ConfigError, match=message) as error:
        load_params(params)
    assert "\n" not in str(error.value)


def test_a_confirmed_setting_is_a_trials_values_on_the_paths_the_space_still_has(tmp_path):
    """A study begun when its space held the root noise: confirming it leaves the noise as the params say."""
    params = load_params(play_params(tmp_path))
    study = optuna.create_study(direction="maximize")
    distributions = {
        "search.c_puct": optuna.distributions.FloatDistribution(0.5, 5.0, log=True),
        "search.dirichlet_alpha": optuna.distributions.FloatDistribution(0.05, 2.0, log=True),
    }
    values = {"search.c_puct": 0.7, "search.dirichlet_alpha": 1.7}
    study.add_trial(optuna.trial.create_trial(params=values, distributions=distributions, value=0.6))
    shipped, (name, tuned) = play.candidates(study, params)
    assert shipped[0] == "shipped" and name == "trial 0"
    assert tuned == {"search.c_puct": 0.7}


def test_a_panel_member_the_game_cannot_seat_is_one_line_before_any_trial(tmp_path, capsys):
    params = play_params(tmp_path, panel=["shipped", "optimal"])
    storage = f"sqlite:///{tmp_path / 'sweep.db'}"
    with pytest.raises(SystemExit):
        sweep_command.main(["--play", str(network(tmp_path)), "--params", str(params), "--storage", storage])
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "sweep.play.panel[1]" in err and "\n" not in err
    assert not (tmp_path / "sweep.db").exists()


def test_a_worker_whose_trial_was_failed_as_lost_meanwhile_goes_on(tmp_path, caplog):
    """On a loaded machine another worker may fail a trial whose heartbeat came late, and queue it again:
    the worker that still played it drops its result in a warning instead of dying (the 2-player
    Kingdomino confirmation's "Cannot tell a FAIL trial")."""
    import optuna

    from pipeline.sweeps.workers import optimize_one

    url = f"sqlite:///{tmp_path / 'sweep.db'}"
    study = optuna.create_study(storage=url, study_name="lost")
    other = optuna.load_study(storage=optuna.storages.RDBStorage(url), study_name="lost")

    def objective(trial):
        other.tell(trial.number, state=optuna.trial.TrialState.FAIL)  # as `fail_lost_trials` elsewhere
        trial.set_user_attr("games", 8)
        return 1.0

    optimize_one(study, objective)
    assert [t.state for t in study.get_trials()] == [optuna.trial.TrialState.FAIL]
    assert "failed meanwhile as lost" in caplog.text

    def broken(trial):
        raise ValueError("a bug of the objective's own")

    with pytest.raises(ValueError, match="a bug of the objective's own"):
        optimize_one(study, broken)


def test_openings_are_random_moves_every_seat_order_of_a_round_starts_from(tmp_path):
    """`opening_plies`: Connect-4's first player wins between strong players, so every trial scored its
    seat, not its setting; from random openings, each shared by both seat orders, the games differ."""
    params = load_params(play_params(tmp_path, opening_plies=4))
    table = play.Table(str(network(tmp_path)), params)
    game, orders = table.game, len(table.orders)
    starts = table.openings(8, [0, 1])
    assert len(starts) == 8 * orders
    assert all(starts[i] is starts[i - i % orders] for i in range(len(starts))), "one opening a round"
    planes = game.encode_batch(starts[::orders])
    assert len({p.tobytes() for p in planes}) > 1 and not game.is_terminal(starts[0])
    assert (game.encode_batch(table.openings(8, [0, 1])[::orders]) == planes).all(), "drawn from the games' seed"
    assert not (game.encode_batch(table.openings(8, [0, 2])[::orders]) == planes).all()
    scores = table.play(play.shipped_values(params), "uct:8", [0, 1], 4, "openings")
    assert len(scores) == 4 and all(s in (0.0, 0.5, 1.0) for s in scores)
    assert play.Table(str(network(tmp_path)), load_params(play_params(tmp_path))).openings(8, [0, 1]) is None


def test_the_docs_first_play_time_study_runs_as_written(tmp_path):
    """examples/first-play-sweep.yaml, then its confirmation, as docs/tuning.md gives them, output to a
    file: a report with its plots or a line for each left out, and no cursor moves from nested bars."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pipeline", "sweep", "--play", "tictacmo"]
    command += ["--params", str(ROOT / "examples" / "first-play-sweep.yaml")]
    for extra in ([], ["--confirm"]):
        done = subprocess.run(command + extra, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert "\x1b[" not in done.stderr and "[A" not in done.stderr
    report = (tmp_path / "sweeps" / "first-play" / "report.md").read_text()
    assert "## Recommended: " in report and "as its card says" in report
    assert "![Score of each complete trial" in report
    assert "importances.png" in report or "Importances and slices are left out" in report
    study = optuna.load_study(study_name="first-play", storage=f"sqlite:///{tmp_path / 'sweep.db'}")
    assert study.metric_names == ["score"]  # optuna-dashboard's label, not "Objective 0"
    # the study's parent run: the recommendation as a tag, its headline alone as metrics (a client of its
    # own: mlflow.set_tracking_uri would leave this store the process's default for the tests after)
    confirmed = json.loads((tmp_path / "sweeps" / "first-play" / "play_confirmation.json").read_text())
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiments = [e.experiment_id for e in client.search_experiments()]
    parents = client.search_runs(experiments, filter_string="tags.confirmed_setting != ''")
    assert [run.data.tags["confirmed_setting"] for run in parents] == [confirmed["recommended"]]
    assert set(parents[0].data.metrics) <= {"confirmed_score", "confirmed_ci95_low", "confirmed_ci95_high",
                                             "confirmed_difference", "confirmed_difference_ci95_low"}  # fmt: skip
    blocks = client.search_runs(experiments, filter_string="tags.confirm_setting != ''")
    assert blocks and all(run.data.params for run in blocks)  # each block's setting, to compare them by


def test_a_read_only_store_is_one_line(tmp_path, monkeypatch, capsys):
    """A study whose SQLite file cannot be written (opened read-only here: root writes past any mode):
    one line naming the store's refusal, where it was 107-115 lines of traceback."""
    monkeypatch.chdir(tmp_path)
    argv = ["--play", "tictacmo", "--params", str(ROOT / "examples" / "first-play-sweep.yaml"), "--trials", "1"]
    sweep_command.main(argv)
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        sweep_command.main(
            [*argv, "--trials", "2", "--storage", f"sqlite:///file:{tmp_path / 'sweep.db'}?mode=ro&uri=true"]
        )
    error = capsys.readouterr().err.strip().splitlines()
    assert (
        stopped.value.code == 1
        and error[-1] == "error: store: (sqlite3.OperationalError) attempt to write a readonly database"
    )
    assert not any(line.startswith("Traceback") for line in error)


def test_the_paste_block_says_when_the_study_searched_another_budget():
    """The study of examples/first-play-sweep.yaml searches 25 simulations a move, the network's params 50:
    the block keeps the network's own budget and says what the study ran at."""
    from pipeline.sweeps.play_report import search_block

    params = load_params(ROOT / "examples" / "first-play-sweep.yaml")
    block = search_block(params, {"search.c_puct": 1.5})
    assert "simulations: 50  # the network's own; this study searched 25 simulations a move" in block
    assert yaml.safe_load(block)["search"] == {**params.search.model_dump(), "c_puct": 1.5}
