"""docs/adding-a-game.md runs as written: its game, saved in a folder outside the package, is checked by
a match of baselines, trained by `dvc repro` (on the tests' tiny budgets), then played, matched and
analysed, without a line of the package changed."""

import re

import pytest
from dvc_project import ROOT, edit_params, new_project, run

pytestmark = pytest.mark.slow

GUIDE = ROOT / "docs" / "adding-a-game.md"


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", GUIDE.read_text(), flags=re.MULTILINE | re.DOTALL)


def test_the_guides_game_trains_plays_matches_and_is_analysed(tmp_path):
    project = new_project(tmp_path / "checkout")
    edit_params(project, lambda p: p.update(generations=p["generations"][:1]))  # one: a shorter test
    for block in code_blocks("python"):  # each file block names its path, from beside the checkout
        path = tmp_path / block.splitlines()[0].removeprefix("# ").strip()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block)
    script = "set -euo pipefail\n" + "\n".join(code_blocks("bash"))
    done = run(["bash", "-c", script], project)
    out = done.stdout
    assert re.search(r"random against uct:100 on nim:Nim\(rows=3\): pairwise score 0\.[0-3]", out)  # uct wins
    assert "nim:Nim(rows=3)" in (project / "reports" / "report.md").read_text()
    assert re.search(r"seat 0 \(az\) plays \dx\d", out)  # the champion sat at the table
    assert re.search(r"best against random on nim:Nim\(rows=3\): pairwise score", out)
    assert re.search(r"3x1,1x1 +seat 0 to move +move \dx\d +value", out)  # the analysis of the guide's line
    assert not list((ROOT / "pipeline").rglob("nim*.py"))  # the package holds no trace of the game


def test_the_guides_package_installs_as_written_and_names_its_game(tmp_path):
    """Section 5: `nim.py` and the guide's `pyproject.toml` in a folder install as they are, and the entry
    point names the game (installed into a folder of its own, so no other test sees it)."""
    import os
    import subprocess
    import sys

    folder = tmp_path / "my-games"
    folder.mkdir()
    (folder / "nim.py").write_text(code_blocks("python")[0])
    (toml,) = code_blocks("toml")
    (folder / "pyproject.toml").write_text(toml)
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target", str(target)]
    subprocess.run([*pip, str(folder)], check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    made = subprocess.run(
        [sys.executable, "-c", "from pipeline.games import make_game; print(make_game('nim(rows=3)').num_actions)"],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0 and made.stdout.strip() == "15", made.stderr
