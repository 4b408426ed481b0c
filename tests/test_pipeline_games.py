"""Another game is one changed line of params.yaml: the whole DVC pipeline on tiny params runs for it,
deterministic and with dice, and reports it. A file of its own so that `pytest -n` runs it beside the
experiments of `test_pipeline.py`."""

import pytest
from dvc_project import edit_params, new_project, repro, run

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return new_project(tmp_path_factory.mktemp("project"))


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("connect4", "Petosa & Balch experiments"),
        ("pig(players=2,goal=12)", "Oracle: two-player Pig"),  # dice: chance nodes, oracle evaluation
    ],
)
def test_switching_the_game_needs_no_other_change(project, spec, expected):
    edit_params(project, lambda p: p.update(game=spec, generations=p["generations"][:1]))  # one: a shorter test
    try:
        ran = repro(project)
    finally:
        run(["git", "checkout", "params.yaml"], project)
    assert "init" in ran and "report" in ran
    report = (project / "reports/report.md").read_text()
    assert spec in report and expected in report
