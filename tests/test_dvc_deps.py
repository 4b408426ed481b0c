"""dvc.yaml declares what each stage runs and reads, so that a change re-runs exactly the stages that
depend on it: every project module a stage imports (its import closure, read statically) is a dep of
the stage, the file or a folder above it; every params key the stage reads (recorded while the stages
run on tiny params) is one of its params, the key or a section above it. And nothing declared is
unused: a module dep the stage never imports, or a param it never reads, re-runs it for nothing."""

import importlib

import pytest
import yaml
from import_graph import ROOT, closure
from pydantic import BaseModel
from shipped import shipped_params

import pipeline.config.reader
from pipeline.config import NOT_SETTING, Params, Section

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset

STAGES = {  # each stage's command-line arguments on a one-generation run
    "init": [],
    "selfplay": ["1", "0"],
    "train": ["1", "0"],
    "gate": ["1", "0"],
    "evaluate": ["1"],
    "report": [],
}
TINY = {
    "workers": 1,  # every game in the stage's own process, where its params reads are seen
    "teacher": {"player": "random", "games": 2, "epochs": 1},  # init reads what a taught generation 0 reads
    "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
    "search": {"simulations": 8},
    "selfplay": {"games": 4, "parallel_games": 4, "opponent": "random", "opponent_share": 0.5},  # its c_uct read
    "train": {"epochs": 1},
    "gate": {"games_per_seating": 1, "threshold": 0.0},
    "evaluate": {
        "fig3": {"opponent_rollouts": [4], "games_per_seating": 1},
        "ratings": {"games_per_seating": 1, "uct_baselines": [4]},
    },
}


def stage_specs() -> dict[str, dict]:
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    return {name: stage.get("do") or stage for name, stage in stages.items()}


def covered(name: str, entries: list[str], separator: str) -> bool:
    """`name` is an entry or lies under one (`pipeline/games/base.py` under `pipeline/games`)."""
    return any(name == e or name.startswith(e.rstrip(separator) + separator) for e in entries)


def test_the_stages_are_the_ones_checked():
    assert set(stage_specs()) == set(STAGES)


def test_every_stage_declares_the_project_modules_it_imports_and_no_other():
    gaps = []
    for stage, spec in stage_specs().items():
        declared = [d for d in spec["deps"] if d.startswith(("pipeline", "stages", "alphazero_games"))]
        used = sorted(p.relative_to(ROOT).as_posix() for p in closure(ROOT / "stages" / f"{stage}.py"))
        missing = [m for m in used if not covered(m, declared, "/")]
        unused = [d for d in declared if not any(covered(m, [d], "/") for m in used)]
        if missing:
            gaps.append(f"{stage}: imports, undeclared: {', '.join(missing)}")
        if unused:
            gaps.append(f"{stage}: declared, never imported: {', '.join(unused)}")
    assert not gaps, "dvc.yaml deps differ from what the stages import:\n" + "\n".join(gaps)


@pytest.fixture(scope="module")
def params_read(tmp_path_factory) -> dict[str, set[str]]:
    """The params keys (dotted paths) each stage reads, recorded while the stages run one generation
    on tiny params: every read of a field of the loaded params, and a whole section where one is
    dumped (a checkpoint's provenance hash). The schema's own validators read while loading, not the
    stage; MLflow's copy of every param is a log, not an output."""
    project = tmp_path_factory.mktemp("stages")
    params = shipped_params()
    for key, value in TINY.items():
        params[key] = {**params[key], **value} if isinstance(value, dict) else value
    params["generations"] = params["generations"][:1]
    params["tracking"]["tracking_uri"] = f"sqlite:///{project / 'mlflow.db'}"
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))

    read: dict[str, set[str]] = {}
    reading = [""]  # the stage running; "" while params are validated
    path_of: dict[int, str] = {}  # id of a section of the loaded params -> its dotted path
    sections: list[BaseModel] = []  # kept alive, so that no id is reused
    original_get, original_dump = Section.__getattribute__, Section.model_dump
    original_parse = pipeline.config.reader.parse_params

    def get(self, name):
        value = original_get(self, name)
        if reading[0] and name in type(self).model_fields:
            where = "" if type(self) is Params else path_of.get(id(self))
            if where is not None:
                path = f"{where}.{name}" if where else name
                if isinstance(value, BaseModel):
                    path_of[id(value)] = path
                    sections.append(value)
                else:
                    read[reading[0]].add(path)
        return value

    def dump(self, *args, **kwargs):
        if reading[0] and id(self) in path_of:
            read[reading[0]].add(path_of[id(self)])
        return original_dump(self, *args, **kwargs)

    def parse(*args, **kwargs):
        stage, reading[0] = reading[0], ""
        try:
            return original_parse(*args, **kwargs)
        finally:
            reading[0] = stage

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        # MLflow copies the URI the stages set into the environment: undo it with the rest, or later
        # tests' subprocesses would log to this project's store
        patch.setenv("MLFLOW_TRACKING_URI", params["tracking"]["tracking_uri"])
        patch.setattr(Section, "__getattribute__", get)
        patch.setattr(Section, "model_dump", dump)
        patch.setattr(pipeline.config.reader, "parse_params", parse)
        for stage, argv in STAGES.items():
            reading[0], read[stage] = stage, set()
            importlib.import_module(f"stages.{stage}").main(argv)
    return read


def test_every_stage_declares_the_params_it_reads_and_no_other(params_read):
    assert all(params_read.values()), "a stage read no params: is the recording still hooked into pipeline.config?"
    gaps = []
    for stage, spec in stage_specs().items():
        declared = [str(p) for p in spec.get("params", [])]
        used = sorted(p for p in params_read[stage] if p.split(".")[0] not in NOT_SETTING)
        missing = [p for p in used if not covered(p, declared, ".")]
        unused = [d for d in declared if d not in NOT_SETTING and not any(covered(p, [d], ".") for p in used)]
        if missing:
            gaps.append(f"{stage}: reads, undeclared: {', '.join(missing)}")
        if unused:
            gaps.append(f"{stage}: declared, never read: {', '.join(unused)}")
    assert not gaps, "dvc.yaml params differ from what the stages read:\n" + "\n".join(gaps)
