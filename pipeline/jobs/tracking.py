"""The one place that talks to MLflow: the pipeline's parent run, one child run per stage and
generation, per-generation metrics on the parent, artifacts, and the registry's `champion` alias.

A pipeline lineage is one parent run, created by the `init` stage and recorded in `models/run.json`;
every later stage (a separate process under DVC) logs under that parent. A sweep is one parent run per
Optuna study, in the `<experiment>-sweeps` experiment, with one child run per trial.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from pathlib import Path

from pipeline import owners
from pipeline.atomic import write_json
from pipeline.config import Params
from pipeline.credentials import mask_passwords
from pipeline.nets import CheckpointError

RUN_FILE = Path("models/run.json")
CHAMPION_ALIAS = "champion"
OWNER = "owner"  # tag of a child run: its process (pipeline.owners), to tell a killed stage's run
log = logging.getLogger(__name__)


def tracking_uri(params: Params, root: Path | str = ".") -> str:
    """The params' URI, else `default_tracking_uri`."""
    return params.tracking.tracking_uri or default_tracking_uri(root)


def default_tracking_uri(root: Path | str = ".") -> str:
    """`$MLFLOW_TRACKING_URI` (MLflow's own variable: a server's URI with its secrets stays out of
    params.yaml), else the embedded store: an absolute SQLite path at the project root, so DVC's
    temporary experiment copies log to the same database."""
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path(root).resolve() / 'mlflow.db'}"


def warm_up(params: Params) -> None:
    """Start connecting to the params' store in a background thread. Importing MLflow and opening
    its store take 1-2 s of every stage; a stage calls this once its own imports are done, and the
    connection is made while it loads its inputs and starts its worker pool."""
    uri = tracking_uri(params)
    if uri not in _clients:
        future: Future = Future()
        _clients[uri] = future

        def connect() -> None:
            try:
                future.set_result(_connect(uri))
            except BaseException as err:  # handed to whoever asks for the client
                future.set_exception(err)

        threading.Thread(target=connect, name="mlflow-connect", daemon=True).start()


def _client(params: Params):
    """The one client of the params' store in this process."""
    warm_up(params)
    return _clients[tracking_uri(params)].result()


def _connect(uri: str):
    """A client of the store. A new SQLite store is created under a file lock: sweep workers
    starting together would otherwise both create its tables."""
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from filelock import FileLock
    from mlflow import MlflowClient

    if not uri.startswith("sqlite:///"):
        return MlflowClient(tracking_uri=uri)
    with FileLock(uri.removeprefix("sqlite:///") + ".lock"):
        return MlflowClient(tracking_uri=uri)


_clients: dict[str, Future] = {}


def _flatten(data: dict, prefix: str = "") -> dict[str, str]:
    flat = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = json.dumps(value) if isinstance(value, list) else str(value)
    return flat


def _experiment_id(client, name: str) -> str:
    """The named experiment, created on first use (by whichever process gets there first)."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment:
        return experiment.experiment_id
    try:
        return client.create_experiment(name)
    except MlflowException:  # another worker created it a moment ago
        return client.get_experiment_by_name(name).experiment_id


def _log_params(client, run_id: str, data: dict) -> None:
    """Every value flattened to a dotted key; URLs (storage, tracking URI) with their passwords masked."""
    for key, value in _flatten(data).items():
        client.log_param(run_id, key, mask_passwords(value))


def start_pipeline_run(params: Params, run_file: Path = RUN_FILE) -> str:
    """Create the lineage's parent run, log every param once, and record its id."""
    client = _client(params)
    experiment_id = _experiment_id(client, params.tracking.experiment)
    run = client.create_run(experiment_id, run_name=f"{params.game}-seed{params.seed}", tags={"game": params.game})
    _log_params(client, run.info.run_id, params.model_dump(exclude={"generations", "sweep"}))
    write_json(run_file, {"run_id": run.info.run_id, "experiment_id": experiment_id})
    return run.info.run_id


def pipeline_run_id(run_file: Path = RUN_FILE) -> str:
    return json.loads(Path(run_file).read_text())["run_id"]


@contextmanager
def child_run(
    params: Params, parent_id: str, name: str, tags: dict, generation: int | None = None, mirror=True, replaces=False
):
    """A child run of `parent_id`, tagged with its process (`owner`); FAILED if the body raises, unless
    the body ended it itself. The run is created when first used but dated from here, so the body's
    work starts while `warm_up` is still connecting to the store. `replaces`: a run with the same tags
    left RUNNING by a process of this host that is gone (a killed stage) ends KILLED first."""
    started_ms = int(time.time() * 1000)

    def create(client) -> str:
        experiment_id = _parent(client, params, parent_id).info.experiment_id
        if replaces:
            _end_killed_twins(client, params, experiment_id, parent_id, tags)
        run_tags = {"mlflow.parentRunId": parent_id, OWNER: owners.current(), **tags}
        return client.create_run(experiment_id, start_time=started_ms, run_name=name, tags=run_tags).info.run_id

    child = StageRun(params, parent_id, create, generation, mirror)
    try:
        yield child
    except BaseException:
        if not child.ended:
            with suppress(TrackingError):  # no parent to file the failure under: the body's error says more
                child.end("FAILED")
        raise
    if not child.ended:
        child.end("FINISHED")


def _parent(client, params: Params, parent_id: str):
    from mlflow.exceptions import MlflowException

    try:
        return client.get_run(parent_id)
    except MlflowException:
        raise TrackingError(
            f"{RUN_FILE}: parent run {parent_id} is not in the MLflow store {mask_passwords(tracking_uri(params))} "
            "(deleted or replaced?); `dvc repro --force init` starts a new lineage"
        ) from None


class TrackingError(ValueError):
    """The MLflow store does not hold what the pipeline's files say it should."""


def _end_killed_twins(client, params: Params, experiment_id: str, parent_id: str, tags: dict) -> None:
    query = " and ".join(
        [f"tags.`mlflow.parentRunId` = '{parent_id}'", "attributes.status = 'RUNNING'"]
        + [f"tags.{key} = '{value}'" for key, value in tags.items()]
    )
    stale = [
        run.info.run_id
        for run in client.search_runs([experiment_id], query, max_results=1000)
        if owners.is_dead(run.data.tags.get(OWNER, ""))
    ]
    settle_runs(params, stale, "KILLED", ended_by="a re-run of the stage: its process was gone")


def stage_run(params: Params, stage: str, generation: int | None = None):
    """A child run of the pipeline's parent for one stage (and generation), replacing the run of a
    killed earlier attempt."""
    name = stage if generation is None else f"{stage}-gen{generation}"
    tags = {"stage": stage, "generation": str(generation or "")}
    return child_run(params, pipeline_run_id(), name, tags, generation, replaces=True)


def settle_runs(params: Params, run_ids: list[str], status: str, **tags: str) -> None:
    """End the runs with `status` where they hold another (their process died before it could say),
    with tags saying why."""
    client = _client(params)
    for run_id in run_ids:
        if client.get_run(run_id).info.status != status:
            for key, value in tags.items():
                client.set_tag(run_id, key, value)
            client.set_terminated(run_id, status)


def set_run_status(params: Params, run_id: str, status: str) -> None:
    """RUNNING again (a resumed sweep's parent), or ended with `status`."""
    client = _client(params)
    if status == "RUNNING":
        client.update_run(run_id, status)
    else:
        client.set_terminated(run_id, status)


def sweep_parent_run(params: Params, study: str, uid: str, settings: dict) -> str:
    """The study's parent run, shared by every worker on any machine and found by the study's identity
    `uid`, not its name alone (a new study may reuse the name). A worker that finds none creates one;
    then every worker adopts the oldest and deletes its own if it is not that one, so workers starting
    at the same moment still agree on a single parent."""
    client = _client(params)
    experiment_id = _experiment_id(client, f"{params.tracking.experiment}-sweeps")
    query = f"tags.sweep_study = '{study}' and tags.sweep_uid = '{uid}' and tags.sweep_role = 'parent'"

    def parents():
        runs = client.search_runs([experiment_id], query, max_results=100)
        return sorted(runs, key=lambda r: (r.info.start_time, r.info.run_id))

    found = parents()
    if found:
        return found[0].info.run_id
    tags = {"sweep_study": study, "sweep_uid": uid, "sweep_role": "parent", "game": params.game}
    mine = client.create_run(experiment_id, run_name=f"sweep {study}", tags=tags).info.run_id
    oldest = parents()[0].info.run_id
    if oldest != mine:
        client.delete_run(mine)
    else:
        _log_params(client, mine, settings)
    return oldest


class StageRun:
    """A child run, created on first use by `create(client) -> run id` (see `child_run`)."""

    def __init__(self, params: Params, parent_id: str, create, generation: int | None, mirror=True):
        self.params, self.parent_id, self.generation = params, parent_id, generation
        self.mirror, self.ended = mirror, False
        self._create, self._run_id = create, None

    @property
    def client(self):
        return _client(self.params)

    @property
    def run_id(self) -> str:
        if self._run_id is None:
            self._run_id = self._create(self.client)
        return self._run_id

    def log_metrics(self, metrics: dict[str, float], prefix: str = "", step: int | None = None) -> None:
        """On the child run, and (`mirror`) on the parent with the generation as step (curves over
        generations); `step` names another generation (evaluation's rating of every generation)."""
        step = step if step is not None else self.generation or 0
        for key, value in metrics.items():
            self.client.log_metric(self.run_id, f"{prefix}{key}", float(value), step=step)
            if self.mirror:
                self.client.log_metric(self.parent_id, f"{prefix}{key}", float(value), step=step)

    def log_params(self, data: dict) -> None:
        _log_params(self.client, self.run_id, data)

    def end(self, status: str, **tags: str) -> None:
        """End the run now with `status` (e.g. KILLED for a pruned trial) and tags saying why."""
        for key, value in tags.items():
            self.client.set_tag(self.run_id, key, value)
        self.client.set_terminated(self.run_id, status)
        self.ended = True

    def log_artifact(self, path: Path | str, artifact_path: str | None = None, on_parent: bool = False) -> None:
        self.client.log_artifact(self.parent_id if on_parent else self.run_id, str(path), artifact_path)

    def lightning_logger(self):
        from pytorch_lightning.loggers import MLFlowLogger

        return MLFlowLogger(tracking_uri=tracking_uri(self.params), run_id=self.run_id)

    def promote_champion(self, checkpoint: Path) -> str:
        """Log the checkpoint, register it as a new model version and move the `champion` alias."""
        from mlflow.exceptions import MlflowException

        self.log_artifact(checkpoint, "champion")
        name = self.params.tracking.model_name
        try:
            self.client.create_registered_model(name)
        except MlflowException:
            pass  # already registered
        source = f"{self.client.get_run(self.run_id).info.artifact_uri}/champion/{Path(checkpoint).name}"
        version = self.client.create_model_version(name, source, run_id=self.run_id)
        self.client.set_registered_model_alias(name, CHAMPION_ALIAS, version.version)
        return version.version

    def finish_pipeline(self) -> None:
        self.client.set_terminated(self.parent_id, "FINISHED")


def download_champion(tracking_uri: str, model_name: str, directory: Path) -> Path:
    """Download the checkpoint that the registered model's `champion` alias points at."""
    store = tracking_uri.removeprefix("sqlite:///")
    if store != tracking_uri and not Path(store).exists():  # MLflow would create an empty store
        raise CheckpointError(f"no MLflow store at {tracking_uri} (run the pipeline, or give --tracking-uri)")
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow import MlflowClient, artifacts
    from mlflow.exceptions import MlflowException

    try:
        version = MlflowClient(tracking_uri=tracking_uri).get_model_version_by_alias(model_name, CHAMPION_ALIAS)
        path = artifacts.download_artifacts(version.source, dst_path=str(directory), tracking_uri=tracking_uri)
    except MlflowException as err:
        reason = str(err.message).splitlines()[0]
        raise CheckpointError(f"{tracking_uri}: no {CHAMPION_ALIAS} of model {model_name!r} ({reason})") from None
    return Path(path)


def download_run_artifact(params: Params, run_id: str, name: str, directory: Path) -> Path:
    """One artifact of a run (a sweep trial's network), downloaded into `directory`."""
    return Path(_client(params).download_artifacts(run_id, name, str(directory)))


def log_to_run(params: Params, run_id: str, metrics: dict[str, float], folder: Path | None = None) -> None:
    """Metrics, and every finished file of `folder` as artifacts, on an existing run (a sweep's parent).
    File by file, skipping the hidden temporary names of writes in progress: another worker may be
    rewriting the same report folder at this moment."""
    client = _client(params)
    for key, value in metrics.items():
        client.log_metric(run_id, key, float(value))
    if folder is not None:
        for path in sorted(Path(folder).iterdir()):
            if path.is_file() and not path.name.startswith("."):
                client.log_artifact(run_id, str(path), Path(folder).name)
