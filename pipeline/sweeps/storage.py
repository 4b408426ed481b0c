"""Optuna storages for sweep workers that may be killed at any moment.

Workers that start together take turns to create the tables and the study with its baseline trial
(otherwise both create them: one dies, or the study gets two baselines): a file lock of this host for a
local file, an advisory lock of the server for PostgreSQL, whatever host the workers run on.

A trial lost with its worker must neither stay RUNNING (a re-run would count it as live and never
finish the study) nor wait minutes: each trial records its worker
(`pipeline.plumbing.owners`), and a dead worker of this host fails its trials at once; on any storage, the
journal included, a heartbeat fails a trial whose worker on another host went silent. Either way the
trial is retried with its params, at most `MAX_RETRY` times.
"""

from __future__ import annotations

import contextlib
import copy
import os
import time
import warnings
from pathlib import Path

import optuna
import sqlalchemy
from filelock import FileLock
from optuna.storages._heartbeat import BaseHeartbeat
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from pipeline.config import ConfigError, Params
from pipeline.plumbing import owners
from pipeline.plumbing.credentials import mask_passwords
from pipeline.plumbing.stores import store_scheme

HEARTBEAT_SECONDS = 10
GRACE_SECONDS = 60  # six missed heartbeats: a loaded machine may delay some, a dead worker sends none
MAX_RETRY = 2
WORKER = "worker"  # user attr: the process running this attempt of the trial
RUN_ID = "mlflow_run_id"  # user attr: this attempt's MLflow run
ADVISORY_KEY = 0x5A_1F_A0  # PostgreSQL advisory lock id of the sweep workers (any constant bigint)
_HEARTBEAT = "heartbeat"  # system attr of a journal trial: time of its worker's last beat
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # heartbeats, retries


class RetryLostTrial(optuna.storages.RetryHeartbeatStaleTrialCallback):
    """Optuna's retry of a stale trial, less the attrs of the lost attempt (its worker, its run)."""

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        trial = copy.deepcopy(trial)
        trial.user_attrs = {k: v for k, v in trial.user_attrs.items() if k not in (WORKER, RUN_ID)}
        super().__call__(study, trial)


class HeartbeatJournalStorage(optuna.storages.JournalStorage, BaseHeartbeat):
    """A journal storage with Optuna's heartbeat (which only databases have): a running trial's last
    beat is a system attr, so a worker on another host that shares the file can tell a silent one."""

    def record_heartbeat(self, trial_id: int) -> None:
        self.set_trial_system_attr(trial_id, _HEARTBEAT, time.time())

    def _get_stale_trial_ids(self, study_id: int) -> list[int]:
        now = time.time()
        running = self.get_all_trials(study_id, deepcopy=False, states=(TrialState.RUNNING,))
        return [t._trial_id for t in running if now - t.system_attrs.get(_HEARTBEAT, now) > GRACE_SECONDS]

    def get_heartbeat_interval(self) -> int:
        return HEARTBEAT_SECONDS

    def get_heartbeat_stale_trial_callback(self) -> RetryLostTrial:
        return RetryLostTrial(max_retry=MAX_RETRY)


def storage_lock(url: str) -> contextlib.AbstractContextManager:
    """The lock workers take turns under: a file lock next to a local file, PostgreSQL's advisory lock
    for a database there, none for other servers (start their first worker alone)."""
    if url.startswith("postgresql"):
        return _advisory_lock(url)
    path = url.removeprefix("journal:") if url.startswith("journal:") else url.removeprefix("sqlite:///")
    path = path if url.startswith("journal:") else path.split("?", 1)[0]  # no query value in a file name
    if path == url or path in ("", ":memory:"):
        return contextlib.nullcontext()
    return FileLock(f"{path}.workers.lock")  # not `.lock`: the journal file backend takes that name


@contextlib.contextmanager
def _advisory_lock(url: str):
    """A session-level advisory lock of the database server, held on a connection of its own and
    released with it, so a worker killed while holding it frees it."""
    engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text("SELECT pg_advisory_lock(:key)"), {"key": ADVISORY_KEY})
            try:
                yield
            finally:
                connection.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:key)"), {"key": ADVISORY_KEY})
    finally:
        engine.dispose()


def default_storage(root: Path | str = ".") -> str:
    return f"sqlite:///{Path(root).resolve() / 'sweep.db'}"


def resolve_storage(option: str | None, params: Params) -> str:
    """`--storage`, else `sweep.storage`, else `$OPTUNA_STORAGE` (Optuna's own variable: a URL with a
    password stays out of params.yaml), else the project's `sweep.db`."""
    return option or params.sweep.storage or os.environ.get("OPTUNA_STORAGE") or default_storage()


def open_storage(url: str) -> optuna.storages.BaseStorage:
    """`journal:<file>` or a database URL, with a heartbeat; a bad URL (a port that is no number, a
    key-value DSN) or a missing driver is one line, its password masked."""
    try:
        store_scheme(url)  # a DSN: SQLAlchemy's parse error would quote it
        if url.startswith("journal:"):
            return HeartbeatJournalStorage(JournalFileBackend(url.removeprefix("journal:")))
        with storage_lock(url):
            return optuna.storages.RDBStorage(
                url,
                heartbeat_interval=HEARTBEAT_SECONDS,
                grace_period=GRACE_SECONDS,
                heartbeat_stale_trial_callback=RetryLostTrial(max_retry=MAX_RETRY),
            )
    except (ImportError, sqlalchemy.exc.SQLAlchemyError, OSError, ValueError) as err:  # StoreError is one
        hint = "; PostgreSQL needs psycopg 3: pip install '.[postgres]'" if isinstance(err, ImportError) else ""
        reason = str(err.__cause__ or err).strip().splitlines()[0]
        raise ConfigError(f"storage {mask_passwords(url)}: {mask_passwords(reason)}{hint}") from None


def fail_lost_trials(study: optuna.Study, url: str) -> None:
    """Fail and retry the running trials whose worker is gone: at once for a dead process of this host,
    after `GRACE_SECONDS` without a heartbeat for any other."""
    optuna.storages.fail_stale_trials(study)
    retry = RetryLostTrial(max_retry=MAX_RETRY)
    with storage_lock(url):  # two workers of this host must not both retry one trial
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if not owners.is_dead(trial.user_attrs.get(WORKER, "")):
                continue
            try:
                study.tell(trial.number, state=TrialState.FAIL)
            except (ValueError, optuna.exceptions.UpdateFinishedTrialError):
                continue  # another worker failed it first
            retry(study, trial)
