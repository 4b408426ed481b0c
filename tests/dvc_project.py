"""A DVC project of the repository on tiny params in a temporary git repo, for the tests that run the
real pipeline (`test_pipeline.py`, `test_pipeline_games.py`, `test_servers.py`)."""

import copy
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from shipped import shipped_params

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
    "search": {"simulations": 8},
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


GIT_USER = {  # commits in the test repository, on a machine where git knows no user
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def run(cmd, cwd, check=True):
    env = {**os.environ, **GIT_USER, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
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


def tiny_pipeline_params(generations: int) -> dict:
    """params.yaml on the TINY budgets with its first `generations`: a copy of its own each call, since
    callers change it (a change to TINY's own dicts reached every project made after it)."""
    params = shipped_params()
    for section, values in copy.deepcopy(TINY).items():
        params[section].update(values)
    params["generations"] = params["generations"][:generations]
    return params


def new_project(project: Path) -> Path:
    """The repository, its tiny params and its DVC, committed in the empty folder `project`."""
    for name in ("pipeline", "stages", "alphazero_games"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dvc.yaml", ".gitignore"):
        shutil.copy(ROOT / name, project / name)
    (project / "params.yaml").write_text(yaml.safe_dump(tiny_pipeline_params(2), sort_keys=False))
    run(["git", "init", "-q"], project)
    run(["dvc", "init", "-q"], project)
    shutil.copy(ROOT / ".dvcignore", project / ".dvcignore")
    run(["git", "add", "-A"], project)
    run(["git", "commit", "-qm", "the project"], project)
    return project
