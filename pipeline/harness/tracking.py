"""The one place that talks to MLflow: the pipeline's parent run, one child run per stage and
generation, per-generation metrics on the parent, artifacts, and the registry's `champion` alias.

A pipeline run is one parent run per *setting*: every param the run's outputs depend on (all but
where it runs and logs). Each stage (a separate process under DVC) finds its setting's parent by a
hash of those params, or creates it, so a `dvc exp run -S search.c_puct=2` is a run of its own beside
the old one, whichever stages DVC reuses. A sweep is one parent run per Optuna study, in the
`<experiment>-sweeps` experiment, with one child run per trial.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future
from contextlib import contextmanager, suppress
from pathlib import Path

from pipeline.config import Params, dotted
from pipeline.nets import CheckpointError
from pipeline.plumbing import owners
from pipeline.plumbing.credentials import mask_passwords
from pipeline.plumbing.failures import TrackingError
from pipeline.plumbing.stores import check_store, sqlite_file

CHAMPION_ALIAS = "champion"
GAME_TAG = "game"  # a registered version's tag: the game its network plays
OWNER = "owner"  # tag of a child run: its process (pipeline.plumbing.owners), to tell a killed stage's run
SETTING = "setting"  # tag of a pipeline's parent run: the hash of its setting (`setting_key`)
FIGURES_TABLE = "figures.json"  # a run's one-time figures, a table (`StageRun.log_figures`)
DVC_EXPERIMENT = "dvc_experiment"  # tag: the DVC experiment that ran the setting (`dvc exp run -n NAME`)
GIT_COMMIT = "mlflow.source.git.commit"  # MLflow's own tag, shown in its UI: the code's commit
DVC_EXPERIMENT_COMMIT = "dvc_experiment_commit"  # tag: the experiment's own commit, recorded by `compare`
# Per-generation figures of each stage's metrics file, as MLflow names them: this prefix, then the key.
STAGE_PREFIX = {"selfplay": "selfplay_", "train": "train_", "gate": ""}
NOT_FIGURES = ("threshold",)  # a param copied into the gate's file for the report, not a figure
log = logging.getLogger(__name__)


def tracking_uri(params: Params, root: Path | str = ".") -> str:
    """The params' URI, else `default_tracking_uri`."""
    return params.tracking.tracking_uri or default_tracking_uri(root)


def default_tracking_uri(root: Path | str = ".") -> str:
    """`$MLFLOW_TRACKING_URI` (MLflow's own variable: a server's URI with its secrets stays out of
    params.yaml), else the embedded store: an absolute SQLite path at the project root. Under DVC the
    root is `$DVC_ROOT`, so experiments that DVC runs in a temporary copy (`dvc exp run --temp`,
    `--queue`) log to the same database as the workspace."""
    root = os.environ.get("DVC_ROOT") or root
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{Path(root).resolve() / 'mlflow.db'}"


def warm_up(params: Params) -> None:
    """Check that the params' store answers (a `StoreError` in one line within seconds, before any
    work), then start connecting to it in a background thread. Importing MLflow and opening its store
    take 1-2 s of every stage; a stage calls this once its own imports are done, and the connection is
    made while it loads its inputs and starts its worker pool."""
    uri = tracking_uri(params)
    if uri not in _clients:
        check_store(uri)
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


def _experiment_id(client, name: str) -> str:
    """The named experiment, created on first use (by whichever process gets there first). In a local
    store its artifacts live in `mlruns/<name>/` beside it at the project root (`$DVC_ROOT` under DVC), not
    in the working folder of whichever process created it (a temporary experiment's copy)."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment:
        return experiment.experiment_id
    store = sqlite_file(client.tracking_uri)
    location = (store.resolve().parent / "mlruns" / name).as_uri() if store else None
    try:
        return client.create_experiment(name, artifact_location=location)
    except MlflowException:  # another worker created it a moment ago, else the store failed (a full disk)
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


def _log_params(client, run_id: str, data: dict) -> None:
    """Every value flattened to a dotted key; URLs (storage, tracking URI) with their passwords masked. In
    batches of MLflow's most a request (100), not a write a param."""
    from mlflow.entities import Param

    items = [
        Param(key, mask_passwords(json.dumps(value) if isinstance(value, list) else str(value)))
        for key, value in dotted(data).items()
    ]
    for start in range(0, len(items), 100):
        client.log_batch(run_id, params=items[start : start + 100])


def setting_key(params: Params) -> str:
    """A short hash of the params' setting (`Params.setting`): the identity of its parent run."""
    return hashlib.sha256(json.dumps(params.setting(), sort_keys=True).encode()).hexdigest()[:12]


def setting_run_id(client, params: Params) -> str:
    """The parent run of the params' setting: found by its key, else created with every param of the
    setting, the game, the DVC experiment's name and the git commit as tags."""
    key = setting_key(params)
    experiment_id = _experiment_id(client, params.tracking.experiment)
    name = os.environ.get("DVC_EXP_NAME") or f"{params.game}-seed{params.seed}-{key[:6]}"
    tags = {"game": params.game, **_source_tags()}
    return _shared_run(client, experiment_id, {SETTING: key}, tags, name, params.setting())


def _source_tags() -> dict[str, str]:
    """The DVC experiment that runs this stage (DVC sets `$DVC_EXP_NAME` and `$DVC_EXP_BASELINE_REV`
    in `dvc exp run`), and the git commit of the code: the experiment's baseline, else HEAD."""
    tags = {DVC_EXPERIMENT: os.environ["DVC_EXP_NAME"]} if os.environ.get("DVC_EXP_NAME") else {}
    commit = os.environ.get("DVC_EXP_BASELINE_REV")
    if not commit:
        try:
            head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
            commit = head.stdout.strip() if head.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):  # no git here: no commit to name
            commit = None
    return {**tags, GIT_COMMIT: commit} if commit else tags


def experiment_commits(repo: Path) -> dict[tuple[str, str], str]:
    """DVC's experiments in the git repository at `repo`: (baseline commit, name) -> the experiment's
    own commit. DVC makes that commit after the last stage has run, so no stage can log it; `compare`
    records it on the run (`record_experiment_commits`). Outside a git repository: none."""
    try:
        listed = subprocess.run(
            ["git", "for-each-ref", "--format=%(refname) %(objectname)", "refs/exps/"],
            cwd=repo, capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    commits = {}
    for line in listed.stdout.splitlines() if listed.returncode == 0 else []:
        ref, commit = line.rsplit(" ", 1)
        parts = ref.split("/")  # refs/exps/<baseline[:2]>/<baseline[2:]>/<name>; DVC's queues live elsewhere
        if len(parts) >= 5 and len(parts[2]) == 2 and len(parts[2] + parts[3]) in (40, 64):  # SHA-1, SHA-256
            commits[(parts[2] + parts[3], "/".join(parts[4:]))] = commit
    return commits


def record_experiment_commits(client, runs, repo: Path) -> None:
    """Tag each parent run of a DVC experiment (`run_id` and its `tags` dict) with the experiment's own
    commit where git knows it, so MLflow's UI shows it beside the baseline's; an experiment run again
    (`dvc exp run -f -n NAME`) moves the tag to its new commit. A store that takes no writes keeps the
    tags it has, with one warning."""
    experiments = [run for run in runs if DVC_EXPERIMENT in run.tags]
    commits = experiment_commits(repo) if experiments else {}
    for run in experiments:
        commit = commits.get((run.tags.get(GIT_COMMIT, ""), run.tags[DVC_EXPERIMENT]))
        if not commit or run.tags.get(DVC_EXPERIMENT_COMMIT) == commit:
            continue
        try:
            client.set_tag(run.run_id, DVC_EXPERIMENT_COMMIT, commit)
        except Exception as err:  # MlflowException and its store's own errors: a read-only store
            log.warning("experiment commits not recorded in MLflow: %s", str(err).splitlines()[0] if str(err) else err)
            return
        run.tags[DVC_EXPERIMENT_COMMIT] = commit


def _shared_run(client, experiment_id: str, identity: dict, tags: dict, name: str, params: dict) -> str:
    """The run whose tags hold `identity`, shared by every process on any machine. A process that finds
    none creates one; then every process adopts the oldest and deletes its own if it is not that one,
    so processes starting at the same moment still agree on a single run."""
    query = " and ".join(f"tags.{key} = '{value}'" for key, value in identity.items())

    def found():
        runs = client.search_runs([experiment_id], query, max_results=100)
        return sorted(runs, key=lambda r: (r.info.start_time, r.info.run_id))

    existing = found()
    if existing:
        return existing[0].info.run_id
    mine = client.create_run(experiment_id, run_name=name, tags={**identity, **tags}).info.run_id
    oldest = found()[0].info.run_id
    if oldest != mine:
        client.delete_run(mine)
    else:
        _log_params(client, mine, params)
    return oldest


def stage_metrics(stage: str, figures: dict) -> dict[str, float]:
    """The numbers of a stage's metrics file (`metrics/<stage>/gen_N.json`) that MLflow keeps per
    generation, under their MLflow names: the stage logs them, and the report copies those of stages
    DVC reused into a new setting's run."""
    prefix = STAGE_PREFIX[stage]
    return {
        f"{prefix}{key}": float(value)
        for key, value in figures.items()
        if isinstance(value, int | float) and key not in NOT_FIGURES
    }


@contextmanager
def child_run(
    params: Params,
    find_parent,
    name: str,
    tags: dict,
    generation: int | None = None,
    mirror=True,
    replaces=False,
    with_params: dict | None = None,
):
    """A child run of the parent `find_parent(client)` names, tagged with its process (`owner`); FAILED
    if the body raises, unless the body ended it itself. The run (and the parent) are looked up when
    first used but dated from here, so the body's work starts while `warm_up` is still connecting to
    the store. The parent is RUNNING while a child runs. `replaces`: a run with the same tags left
    RUNNING by a process of this host that is gone (a killed stage) ends KILLED first. `with_params`: the
    setting's params on the child too, so that a stage's run is found by them (MLflow's filters read a
    run's own params, not its parent's)."""
    started_ms = int(time.time() * 1000)

    def create(client) -> tuple[str, str]:
        parent_id = find_parent(client)
        parent = _parent(client, params, parent_id)
        if parent.info.status != "RUNNING":
            client.update_run(parent_id, "RUNNING")
        if replaces:
            _end_killed_twins(client, params, parent.info.experiment_id, parent_id, tags)
        run_tags = {"mlflow.parentRunId": parent_id, OWNER: owners.current(), **tags}
        created = client.create_run(parent.info.experiment_id, start_time=started_ms, run_name=name, tags=run_tags)
        if with_params:
            _log_params(client, created.info.run_id, with_params)
        return parent_id, created.info.run_id

    child = StageRun(params, create, generation, mirror)
    try:
        try:
            yield child
        except BaseException:
            if not child.ended:
                with suppress(TrackingError, *_store_errors()):  # no parent, or no store: the body's error says more
                    child.end("FAILED")
            raise
        if not child.ended:
            child.end("FINISHED")
    except _store_errors() as err:  # from the body or from ending the run
        raise store_failure(params, err) from None


def _store_errors() -> tuple[type[Exception], ...]:
    """MLflow's errors and those of the database under it, imported only once a run is opened."""
    from mlflow.exceptions import MlflowException
    from sqlalchemy.exc import SQLAlchemyError

    return MlflowException, SQLAlchemyError


def store_failure(params: Params, err: Exception) -> TrackingError:
    """A store's own error (a full disk: "database or disk is full", a server gone) as one line naming the
    store, where MLflow raises it through hundreds of lines of SQLAlchemy. The reason is the database
    driver's own (SQLAlchemy's `orig`), where the chain holds one: SQLAlchemy's first line may be a note."""
    cause: BaseException | None = err
    while cause is not None and getattr(cause, "orig", None) is None:
        cause = cause.__cause__ or cause.__context__
    reason = str(cause.orig if cause is not None else err).strip()
    reason = reason.splitlines()[0] if reason else type(err).__name__
    return TrackingError(f"MLflow store {mask_passwords(tracking_uri(params))}: {reason}")


def _parent(client, params: Params, parent_id: str):
    from mlflow.exceptions import MlflowException

    try:
        return client.get_run(parent_id)
    except MlflowException:
        raise TrackingError(
            f"parent run {parent_id} is not in the MLflow store {mask_passwords(tracking_uri(params))} "
            "(deleted or replaced?)"
        ) from None


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
    """A child run of the setting's parent run for one stage (and generation), replacing the run of a
    killed earlier attempt."""
    name = stage if generation is None else f"{stage}-gen{generation}"
    tags = {"stage": stage, "generation": str(generation or "")}

    def parent(client) -> str:
        return setting_run_id(client, params)

    return child_run(params, parent, name, tags, generation, replaces=True, with_params=params.setting())


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
    `uid`, not its name alone (a new study may reuse the name)."""
    client = _client(params)
    experiment_id = _experiment_id(client, f"{params.tracking.experiment}-sweeps")
    identity = {"sweep_study": study, "sweep_uid": uid, "sweep_role": "parent"}
    return _shared_run(client, experiment_id, identity, {"game": params.game}, f"sweep {study}", settings)


class StageRun:
    """A child run, created on first use by `create(client) -> (parent id, run id)` (see `child_run`)."""

    def __init__(self, params: Params, create, generation: int | None, mirror=True):
        self.params, self.generation = params, generation
        self.mirror, self.ended = mirror, False
        self._create, self._ids = create, None
        self._parent_steps: dict[str, set[int]] = {}  # metric -> steps the parent holds, read once per metric

    @property
    def client(self):
        return _client(self.params)

    @property
    def run_id(self) -> str:
        return self._created()[1]

    @property
    def parent_id(self) -> str:
        return self._created()[0]

    def _created(self) -> tuple[str, str]:
        if self._ids is None:
            self._ids = self._create(self.client)
        return self._ids

    def log_metrics(self, metrics: dict[str, float], prefix: str = "", step: int | None = None) -> None:
        """On the child run, and (`mirror`) on the parent with the generation as step (curves over
        generations); `step` names another generation (evaluation's rating of every generation)."""
        step = step if step is not None else self.generation or 0
        for key, value in metrics.items():
            self.client.log_metric(self.run_id, f"{prefix}{key}", float(value), step=step)
        if self.mirror:
            self.log_history([(f"{prefix}{key}", value, step) for key, value in metrics.items()])

    def log_history(self, points: list[tuple[str, float, int]]) -> None:
        """(metric, value, step) points on the parent, each (metric, step) once: a stage that ran twice
        (an orphan of a killed `dvc`, then its re-run) or the report copying the figures of reused
        stages never gives a curve two values at one step. The first value logged stays."""
        from mlflow.entities import Metric

        client, parent_id = self.client, self.parent_id
        now, new = int(time.time() * 1000), []
        for key, value, step in points:
            if key not in self._parent_steps:
                self._parent_steps[key] = {m.step for m in client.get_metric_history(parent_id, key)}
            if step not in self._parent_steps[key]:
                self._parent_steps[key].add(step)
                new.append(Metric(key, float(value), now, step))
        for start in range(0, len(new), 1000):  # MLflow's limit of metrics per batch
            client.log_batch(parent_id, metrics=new[start : start + 1000])

    def log_params(self, data: dict) -> None:
        _log_params(self.client, self.run_id, data)

    def end(self, status: str, **tags: str) -> None:
        """End the run now with `status` (e.g. KILLED for a pruned trial) and tags saying why."""
        for key, value in tags.items():
            self.client.set_tag(self.run_id, key, value)
        self.client.set_terminated(self.run_id, status)
        self.ended = True

    def log_figures(self, figures: dict[str, float], on_parent: bool = False) -> None:
        """One-time figures (fig. 3's differences at the last generation) as one table, `figures.json`,
        which MLflow's artifact view shows as a table: as metrics they were a chart of one dot each,
        sorted before the curves that change per generation."""
        if figures:
            data = {"figure": list(figures), "value": [float(v) for v in figures.values()]}
            self.client.log_table(self.parent_id if on_parent else self.run_id, data, FIGURES_TABLE)

    def log_artifact(self, path: Path | str, artifact_path: str | None = None, on_parent: bool = False) -> None:
        self.client.log_artifact(self.parent_id if on_parent else self.run_id, str(path), artifact_path)

    def lightning_logger(self):
        from pytorch_lightning.loggers import MLFlowLogger

        return MLFlowLogger(tracking_uri=tracking_uri(self.params), run_id=self.run_id)

    def promote_champion(self, checkpoint: Path) -> str:
        """Log the checkpoint and its ONNX export, register the checkpoint as a new model version and move
        its alias (`champion_alias`)."""
        from mlflow.exceptions import MlflowException

        from pipeline.nets.onnx_runtime import export_checkpoint

        self.log_artifact(checkpoint, "champion")
        with tempfile.TemporaryDirectory() as folder:
            onnx_file = Path(folder) / Path(checkpoint).with_suffix(".onnx").name
            export_checkpoint(checkpoint, onnx_file)
            self.log_artifact(onnx_file, "champion")
        name = self.params.tracking.model_name
        try:
            self.client.create_registered_model(name)
        except MlflowException:
            pass  # already registered
        source = f"{self.client.get_run(self.run_id).info.artifact_uri}/champion/{Path(checkpoint).name}"
        tags = {SETTING: setting_key(self.params), "generation": str(self.generation), GAME_TAG: self.params.game}
        version = self.client.create_model_version(name, source, run_id=self.run_id, tags=tags)
        self.client.set_registered_model_alias(name, champion_alias(), version.version)
        self.client.set_registered_model_alias(name, game_alias(champion_alias(), self.params.game), version.version)
        return version.version

    def finish_pipeline(self) -> None:
        self.client.set_terminated(self.parent_id, "FINISHED")


def champion_alias() -> str:
    """The alias a promotion moves. The rule (README, "What you see"): `champion` names the last network
    promoted by a run of the committed params (`dvc repro`); a DVC experiment's promotions move its own
    alias, `exp-NAME`. Trying settings then never moves the network that `--champion` plays: a newcomer's
    alias had ended on the weakest of three experiments, the last to promote."""
    experiment = os.environ.get("DVC_EXP_NAME")
    return f"exp-{experiment}" if experiment else CHAMPION_ALIAS


def game_alias(alias: str, game: str) -> str:
    """The alias of `alias`'s network for one game (`champion-kingdomino_players_4`): one registered
    model serves every game a store's runs train, and `--champion` must never play another game's."""
    return f"{alias}-{re.sub(r'[^0-9A-Za-z]+', '_', game).strip('_')}"


def _champion_version(client, model_name: str, game: str | None):
    """The champion's version, of `game` where given: its own alias, else (a store promoted to before
    champions were kept per game) the `champion` alias where its version plays that game or says none."""
    from mlflow.exceptions import MlflowException

    if game is None:
        return client.get_model_version_by_alias(model_name, CHAMPION_ALIAS)
    try:
        return client.get_model_version_by_alias(model_name, game_alias(CHAMPION_ALIAS, game))
    except MlflowException:
        version = client.get_model_version_by_alias(model_name, CHAMPION_ALIAS)
        if version.tags.get(GAME_TAG, game) != game:
            raise CheckpointError(
                f"the registry's {CHAMPION_ALIAS} of model {model_name!r} plays {version.tags[GAME_TAG]!r}, not"
                f" {game!r}; train {game!r} with `dvc repro`, or give --game"
            ) from None
        return version


def download_champion(tracking_uri: str, model_name: str, directory: Path, game: str | None = None) -> tuple[Path, str]:
    """Download the checkpoint that the registered model's `champion` alias points at (for `game`, that
    game's champion); return it and a line saying which version it is (its generation, game and the run
    that promoted it)."""
    store = sqlite_file(tracking_uri)
    if store and not store.exists():  # MLflow would create an empty store
        raise CheckpointError(f"no MLflow store at {tracking_uri} (run the pipeline, or give --tracking-uri)")
    check_store(tracking_uri)
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    from mlflow import MlflowClient, artifacts
    from mlflow.exceptions import MlflowException

    client = MlflowClient(tracking_uri=tracking_uri)
    try:
        version = _champion_version(client, model_name, game)
        path = artifacts.download_artifacts(version.source, dst_path=str(directory), tracking_uri=tracking_uri)
    except MlflowException as err:
        reason = str(err.message).splitlines()[0]
        of = f" for game {game!r}" if game else ""
        raise CheckpointError(f"{tracking_uri}: no {CHAMPION_ALIAS}{of} of model {model_name!r} ({reason})") from None
    generation, played = version.tags.get("generation"), version.tags.get(GAME_TAG)
    made = (f"generation {generation}, " if generation else "") + (f"{played}, " if played else "")
    return Path(path), f"{model_name} version {version.version} ({made}run {version.run_id})"


def download_run_artifact(params: Params, run_id: str, name: str, directory: Path) -> Path:
    """One artifact of a run (a sweep trial's network), downloaded into `directory`."""
    return Path(_client(params).download_artifacts(run_id, name, str(directory)))


def log_to_run(
    params: Params, run_id: str, metrics: dict[str, float], folder: Path | None = None, tags: dict | None = None
) -> None:
    """Metrics, tags, and every finished file of `folder` as artifacts, on an existing run (a sweep's
    parent). File by file, skipping the hidden temporary names of writes in progress: another worker may
    be rewriting the same report folder at this moment."""
    client = _client(params)
    for key, value in metrics.items():
        client.log_metric(run_id, key, float(value))
    for key, value in (tags or {}).items():
        client.set_tag(run_id, key, str(value))
    if folder is not None:
        for path in sorted(Path(folder).iterdir()):
            if path.is_file() and not path.name.startswith("."):
                client.log_artifact(run_id, str(path), Path(folder).name)


def population_member_run(params: Params, parent_id: str, uid: str, member: int, name: str) -> str:
    """A population member's child run, shared by every driver that resumes the population and found by
    the population's identity `uid` and the member's number."""
    client = _client(params)
    experiment_id = _parent(client, params, parent_id).info.experiment_id
    identity = {"population_uid": uid, "population_member": str(member)}
    return _shared_run(client, experiment_id, identity, {"mlflow.parentRunId": parent_id}, name, {})


def log_step(params: Params, run_id: str, metrics: dict[str, float], step: int, tags: dict | None = None) -> None:
    """Metrics at one step (a population member's generation) and tags, in one call to the store."""
    from mlflow.entities import Metric, RunTag

    now = int(time.time() * 1000)
    batch = [Metric(key, float(value), now, step) for key, value in metrics.items()]
    _client(params).log_batch(run_id, metrics=batch, tags=[RunTag(k, str(v)) for k, v in (tags or {}).items()])


def logged_steps(params: Params, run_id: str, key: str) -> set[int]:
    """The steps at which a run holds metric `key`."""
    return {metric.step for metric in _client(params).get_metric_history(run_id, key)}
