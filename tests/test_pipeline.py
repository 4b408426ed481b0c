"""The whole DVC pipeline on tiny params in a temporary git repo: a first run, a no-op second run, then
three `dvc exp run` experiments (an added generation, a changed evaluation param, another c_puct in a
temporary copy) compared by DVC and by MLflow, one parent run each, by the compare command and by the
notebooks; bad params refused; another game's params and back, which runs no stage (other games:
`test_pipeline_games.py`)."""

import json
import re
import shlex
import shutil
import sys

import pytest
from dvc_project import ROOT, edit_params, new_project, repro, run

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return new_project(tmp_path_factory.mktemp("project"))


def exp_run(project, *args) -> set[str]:
    """Run `dvc exp run ARGS`; return the names of the stages that actually ran."""
    return set(re.findall(r"Running stage '([^']+)'", run(["dvc", "exp", "run", *args], project).stdout))


def test_pipeline_runs_incrementally_and_restores_each_experiment(project):
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
    run(["git", "add", "-A"], project)
    run(["git", "commit", "-qm", "baseline"], project)  # the baseline the experiments are compared with

    leftover = project / "data/matches/.0123abcd.json.k2j3h4g5.tmp"  # what a `kill -9` mid-write leaves
    leftover.write_text("{")
    edit_params(project, lambda p: p["generations"].append({"gen": 3, "prev": 2}))
    assert exp_run(project, "-n", "longer") == {"selfplay@2", "train@2", "gate@2", "evaluate", "report"}
    assert not leftover.exists(), "the evaluate stage removes leftovers of killed writes"
    assert "up to date" in run(["dvc", "status"], project).stdout

    cached = set((project / "data/matches").glob("*.json"))
    assert exp_run(project, "-n", "fig3", "-S", "evaluate.fig3.games_per_seating=2") == {"evaluate", "report"}
    added = set((project / "data/matches").glob("*.json")) - cached
    assert cached <= set((project / "data/matches").glob("*.json")), "finished matches survive a re-run"
    assert len(added) == 4, "only the changed fig. 3 matches (2 levels x 2 subjects) are played again"

    run(["git", "checkout", "params.yaml"], project)  # back to the baseline's two generations
    commands = readme_experiment_commands()
    changes = {command[command.index("-n") + 1]: command[-1] for command in commands if command[:3] == EXP_RUN}
    assert list(changes) == ["cpuct2", "ratings8"] and "--temp" in commands[0]
    outputs = [run(command, project).stdout for command in commands]  # as the README writes them
    assert "init" not in ran_stages(outputs[0]) and {"selfplay@0", "gate@1", "report"} <= set(ran_stages(outputs[0]))
    assert set(ran_stages(outputs[1])) == {"evaluate", "report"}
    table = outputs[-1]  # `dvc exp show --only-changed ...`: the changed params, not all ~120
    assert all(name in table for name in changes) and "c_puct" in table and "gumbel" not in table
    header = next(line for line in table.splitlines() if "Experiment" in line)
    assert "/" not in header, "the --drop pattern drops the hash column of every data and code file"
    assert "policy_loss" not in header and header.rstrip().endswith("generations"), "the changed params, whole"

    shown = json.loads(run(["dvc", "exp", "show", "--json"], project).stdout)
    rows = {row["name"] or row["rev"]: row for row in experiment_rows(shown)}
    branch = run(["git", "branch", "--show-current"], project).stdout.strip()
    baseline = flat_params(rows[branch])
    for name, change in changes.items():  # each README experiment has its own change and no other
        key, value = change.split("=")
        differ = {k for k, v in flat_params(rows[name]).items() if baseline.get(k) != v}
        assert differ == {key} and str(flat_params(rows[name])[key]) == value, (name, differ)
    metrics = {name: summary_of(row) for name, row in rows.items()}
    assert set(metrics) == {"workspace", branch, "longer", "fig3", *changes}, "a row with numbers for each"
    for name, summary in metrics.items():
        assert set(summary) >= {"champion_gen", "elo", "fig3_ahead", "gate_score", "policy_loss"}, name
        assert all(isinstance(value, int | float) for value in summary.values()), (name, summary)
    assert metrics["longer"]["champion_gen"] == 3 and metrics["cpuct2"]["champion_gen"] == 2
    diff = json.loads(run(["dvc", "exp", "diff", "fig3", "cpuct2", "--json"], project).stdout)
    c_puct = diff["params"]["params.yaml"]["search.c_puct"]
    assert (c_puct["old"], c_puct["new"]) == (3.0, 2)
    assert diff["metrics"]["metrics/summary.json"]["champion_gen"] == {"old": 3, "new": 2, "diff": -1}

    run(["dvc", "exp", "apply", "longer"], project)  # its metrics and report come back with its params
    assert json.loads((project / "metrics/summary.json").read_text())["champion_gen"] == 3
    run(["dvc", "exp", "apply", "cpuct2"], project)
    assert "c_puct 2.0" in (project / "reports/report.md").read_text()
    assert json.loads((project / "metrics/summary.json").read_text()) == metrics["cpuct2"]
    run(["bash", "-c", readme_line("returns to the baseline")], project)
    assert json.loads((project / "metrics/summary.json").read_text()) == metrics[branch]
    assert run(["git", "status", "--porcelain", "params.yaml", "dvc.lock"], project).stdout == ""


EXP_RUN = ["dvc", "exp", "run"]


def readme_experiment_commands() -> list[list[str]]:
    """The experiment lines of the README's "Comparing experiments" block, as written."""
    block = (ROOT / "README.md").read_text().split("### Comparing experiments")[1].split("```bash")[1]
    lines = block.split("```")[0].splitlines()
    return [shlex.split(line.split("  #")[0]) for line in lines if line.startswith("dvc exp")]


def readme_line(context: str) -> str:
    """The command in backticks that the README writes just before `context`."""
    text = " ".join((ROOT / "README.md").read_text().split())
    return text.split(context)[0].rsplit("`", 2)[-2]


def ran_stages(output: str) -> list[str]:
    return re.findall(r"Running stage '([^']+)'", output)


def flat_params(row: dict) -> dict:
    def flat(data, prefix=""):
        for key, value in data.items():
            if isinstance(value, dict):
                yield from flat(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}", value

    return dict(flat(row["data"]["params"]["params.yaml"]["data"]))


def experiment_rows(shown: list[dict]) -> list[dict]:
    """`dvc exp show --json`'s rows: the workspace, the baseline commit and each experiment."""
    rows = []
    for baseline in shown:
        rows.append(baseline)
        for experiment in baseline.get("experiments") or []:
            rows += experiment["revs"]
    return rows


def summary_of(row: dict) -> dict:
    return row["data"]["metrics"]["metrics/summary.json"]["data"]


def test_each_experiment_is_an_mlflow_run_of_its_own_with_its_whole_history(project):
    from mlflow import MlflowClient

    client = MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("alphazero")
    parents = client.search_runs([experiment.experiment_id], "tags.setting != ''", order_by=["attributes.start_time"])
    names = [parent.data.tags.get("dvc_experiment", "") for parent in parents]
    assert names == ["", "longer", "fig3", "cpuct2", "ratings8"], "one parent run per setting, named"
    baseline, longer, fig3, cpuct, ratings = parents
    commits = [parent.data.tags["mlflow.source.git.commit"] for parent in parents]
    ran_on, head = run(["git", "rev-parse", "HEAD~1", "HEAD"], project).stdout.split()  # the project, the baseline
    assert commits == [ran_on] + [head] * 4, "the commit each ran on"
    assert [parent.data.params["search.c_puct"] for parent in parents] == ["3.0"] * 3 + ["2.0", "3.0"]
    assert [parent.data.params["evaluate.ratings.games_per_seating"] for parent in parents] == ["1"] * 4 + ["8"]
    fig3_games = [parent.data.params["evaluate.fig3.games_per_seating"] for parent in parents]
    assert fig3_games == ["1", "1", "2", "1", "1"]
    assert all(parent.info.status == "FINISHED" for parent in parents)
    for parent, generations in ((baseline, 2), (longer, 3), (fig3, 3), (cpuct, 2), (ratings, 2)):
        for metric in ("gate_score", "train_policy_loss", "selfplay_games", "elo"):
            steps = [m.step for m in client.get_metric_history(parent.info.run_id, metric)]
            first = 0 if metric == "elo" else 1  # the ratings start at generation 0
            assert sorted(steps) == list(range(first, generations + 1)), (parent.info.run_name, metric, steps)
        champions = {a.path for a in client.list_artifacts(parent.info.run_id, "champion")}
        assert champions == {f"champion/gen_{generations}.ckpt"}, "each run holds its own champion only"
        assert {"report/report.md", "report/report.html"} <= {
            a.path for a in client.list_artifacts(parent.info.run_id, "report")
        }
        assert "figures.json" in {a.path for a in client.list_artifacts(parent.info.run_id)}  # fig. 3's table
        assert not [name for name in parent.data.metrics if name.startswith("fig3")], "no chart of one dot"
    history = {m.step: m.value for m in client.get_metric_history(fig3.info.run_id, "gate_score")}
    assert history == {m.step: m.value for m in client.get_metric_history(longer.info.run_id, "gate_score")}, (
        "the generations DVC reused are copied from the run that made them"
    )
    children = client.search_runs([experiment.experiment_id], f"tags.mlflow.parentRunId = '{fig3.info.run_id}'")
    assert {r.info.run_name for r in children} == {"evaluate-gen3", "report-gen3"}, "fig3 ran only these stages"
    assert all(r.data.params == fig3.data.params for r in children), "a stage's run carries the setting's params"
    champion = client.get_model_version_by_alias("alphazero-champion", "champion")  # no experiment moves it
    gate = client.get_run(champion.run_id)
    assert gate.info.run_name == "gate-gen2" and gate.data.tags["mlflow.parentRunId"] == baseline.info.run_id
    assert champion.tags["setting"] == baseline.data.tags["setting"]
    tried = client.get_model_version_by_alias("alphazero-champion", "exp-cpuct2")  # the experiment's own
    assert client.get_run(tried.run_id).data.tags["mlflow.parentRunId"] == cpuct.info.run_id


def test_runs_compared_side_by_side_by_the_command_and_the_notebooks(project, tmp_path):
    env_uri = f"sqlite:///{project / 'mlflow.db'}"
    compare = [sys.executable, "-m", "pipeline", "compare", "--tracking-uri", env_uri, "--out", str(tmp_path)]
    result = run([*compare, "cpuct2", "fig3"], project)  # in the project: its git knows the experiments
    lines = result.stdout.splitlines()
    assert lines[0].startswith("run=fig3") and lines[1].startswith("run=cpuct2") and "search.c_puct=2.0" in lines[1]
    shown = {
        row["name"]: row["rev"]
        for row in experiment_rows(json.loads(run(["dvc", "exp", "show", "--json"], project).stdout))
    }
    from mlflow import MlflowClient

    client = MlflowClient(env_uri)
    experiment = client.get_experiment_by_name("alphazero").experiment_id
    recorded = {
        parent.data.tags["dvc_experiment"]: parent.data.tags.get("dvc_experiment_commit")
        for parent in client.search_runs([experiment], "tags.dvc_experiment != ''")
    }
    assert recorded == {"cpuct2": shown["cpuct2"], "fig3": shown["fig3"], "longer": None, "ratings8": None}, (
        "compare records the experiments it shows: each one's own commit, not its baseline's"
    )
    assert f"experiment commit={shown['cpuct2'][:7]}" in lines[1]
    page = (tmp_path / "compare.md").read_text()
    assert "params that differ: evaluate.fig3.games_per_seating, generations, search.c_puct" in page
    assert (tmp_path / "curves.png").stat().st_size > 0

    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        book = nbformat.read(notebook, as_version=4)
        env = {"MLFLOW_TRACKING_URI": env_uri, "ALPHAZERO_EXPERIMENT": "alphazero", "MPLBACKEND": "Agg"}
        with pytest.MonkeyPatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            nbclient.NotebookClient(book, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
        text = "\n".join(
            str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
            for cell in book.cells
            if cell.cell_type == "code"
            for output in cell.get("outputs", [])
        )
        assert "5 runs in 'alphazero'" in text and "search.c_puct" in text, notebook.name


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


def test_a_misspelt_key_costs_no_finished_stage(project):
    """DVC deletes a stage's outputs before the stage can refuse its params; every output is cached, so
    once the key is mended DVC restores them from its run cache instead of running the stage again."""
    assert repro(project) == set(), "the README's way back to the baseline leaves no stage to run"
    edit_params(project, lambda p: p["search"].update(c_pcut=3.0))
    try:
        failed = run(["dvc", "repro"], project, check=False)
    finally:
        edit_params(project, lambda p: p["search"].pop("c_pcut"))
    assert failed.returncode != 0 and "search.c_pcut: unknown key (misspelt?)" in failed.stderr
    assert repro(project) == set(), "the finished stages come back from DVC's cache"
    assert (project / "metrics/selfplay/gen_1.json").exists()
    assert "up to date" in run(["dvc", "status"], project).stdout


def test_going_back_to_the_params_after_another_game_runs_no_stage(project):
    """docs/adding-a-game.md's way back: `git checkout params.yaml && dvc repro` takes every stage from
    DVC's run cache, the evaluation too, though another game's finished matches joined its own."""
    summary, lock = (project / "metrics/summary.json").read_text(), (project / "dvc.lock").read_text()
    matches = set((project / "data/matches").glob("*.json"))
    edit_params(project, lambda p: p.update(game="tictactoe", generations=p["generations"][:1]))
    assert "evaluate" in repro(project)
    assert matches < set((project / "data/matches").glob("*.json")), "the other game's matches are kept"
    run(["git", "checkout", "params.yaml"], project)
    assert repro(project) == set(), "every stage comes back from DVC's cache"
    assert (project / "metrics/summary.json").read_text() == summary
    assert (project / "dvc.lock").read_text() == lock
