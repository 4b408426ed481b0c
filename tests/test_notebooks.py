"""The analysis notebooks run top to bottom against a tiny real MLflow store written by the pipeline's
own tracking code, so a change to what the pipeline logs cannot silently break them."""

import os
from pathlib import Path

import pytest

from pipeline.config import parse_params
from pipeline.jobs.tracking import stage_run, start_pipeline_run

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


@pytest.fixture
def tiny_store(tmp_path, monkeypatch):
    """Two lineages that differ in c_puct, each with ratings over three generations."""
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    for c_puct, slope in ((1.0, 40.0), (3.0, 90.0)):
        params = parse_params(
            {
                "game": "tictacmo",
                "search": {"c_puct": c_puct},
                "tracking": {"tracking_uri": uri, "experiment": "tiny"},
                "generations": [{"gen": 1, "prev": 0}, {"gen": 2, "prev": 1}],
            }
        )
        start_pipeline_run(params)
        with stage_run(params, "evaluate", 2) as run:
            for generation in range(3):
                run.log_metrics({"elo": slope * generation}, step=generation)
    return uri


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs_on_a_tiny_store(notebook, tiny_store, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", tiny_store)
    monkeypatch.setenv("ALPHAZERO_EXPERIMENT", "tiny")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    book = nbformat.read(notebook, as_version=4)
    nbclient.NotebookClient(book, timeout=300, resources={"metadata": {"path": os.getcwd()}}).execute()
    text = "\n".join(
        str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
        for cell in book.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    assert "2 runs in 'tiny'" in text and "search.c_puct" in text
    assert "180.0" in text  # the c_puct 3 run's final rating, read back from the store
