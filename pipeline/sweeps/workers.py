"""Sweep workers: processes that run a study's trials until it holds its target of finished ones, on
one machine (`--jobs`) or several sharing a storage, any of them killed at any moment. The study itself,
what a trial does, is `study.py` (training) or `play.py` (play time); this module only runs them.

A worker fails and retries the trials of dead workers (`storage.py`) before each trial; while the
others' running trials would make up the rest, it waits for them, so a study is finished by whoever is
left. MLflow: one parent run per study (found by the study's identity), RUNNING while a worker works.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
import traceback
from pathlib import Path

import optuna

from pipeline.config import Params, load_params
from pipeline.harness.entry import sigterm_raises
from pipeline.harness.tracking import log_to_run, set_run_status, settle_runs, sweep_parent_run
from pipeline.plumbing.progress import progress_bar
from pipeline.plumbing.threads import use_threads
from pipeline.sweeps.space import with_overrides
from pipeline.sweeps.storage import RUN_ID, fail_lost_trials
from pipeline.sweeps.study import FINISHED, Objective, study_uid, sweep_trials

log = logging.getLogger(__name__)

RUNNING = (optuna.trial.TrialState.RUNNING,)
POLL_SECONDS = 2  # how often a worker with nothing to start looks whether the others' trials ended


def sweep_settings(params: Params, storage_url: str) -> dict:
    return {**params.sweep.model_dump(), "storage": storage_url}


def finished_trials(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=FINISHED))


def parent_run(params: Params, study: optuna.Study, storage_url: str) -> str:
    return sweep_parent_run(params, study.study_name, study_uid(study), sweep_settings(params, storage_url))


def settle_lost_trials(params: Params, study: optuna.Study, storage_url: str) -> None:
    """Fail and retry the trials of dead workers, and end their MLflow runs FAILED as Optuna holds them."""
    fail_lost_trials(study, storage_url)
    failed = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.FAIL,))
    settle_runs(params, [t.user_attrs[RUN_ID] for t in failed if RUN_ID in t.user_attrs], "FAILED", optuna_state="FAIL")


def run_worker(
    source: str | Params,
    storage_url: str,
    trials: int,
    worker: int = 0,
    share: int = 1,
    prepare=sweep_trials,
    objective=Objective,
) -> None:
    """Run trials of `objective(params, parent run, bar)` until the study `prepare` gives holds its target
    of finished ones (counting other workers' too). While the others' running trials would make up the
    rest, wait for them: one that dies is retried here. A worker that shares the machine with `share`
    workers takes its share of the cores. `source`: a params file, or the params themselves (a play-time
    sweep's, resolved from its network)."""
    params = load_params(source) if isinstance(source, str) else source
    if share > 1:
        params = with_overrides(params, {"workers": 1})
        use_threads(max(1, (os.cpu_count() or 1) // share))
    sweep, study, trials = prepare(params, storage_url, worker, trials)
    parent = parent_run(params, sweep, storage_url)
    bar = progress_bar(total=trials, initial=finished_trials(study), desc=f"sweep worker {worker}", position=worker)
    objective = objective(params, parent, bar)
    if finished_trials(study) < trials:
        set_run_status(params, parent, "RUNNING")  # a resumed study's parent runs again
    while True:
        settle_lost_trials(params, study, storage_url)
        done = finished_trials(study)
        bar.update(done - bar.n)
        if done >= trials:
            break
        if done + running_trials(study) >= trials:
            time.sleep(POLL_SECONDS)
        else:
            optimize_one(study, objective)
    bar.close()
    if not running_trials(study):
        set_run_status(params, parent, "FINISHED")


def optimize_one(study: optuna.Study, objective) -> None:
    """One trial. Where a loaded machine held this worker's heartbeat past the grace period, another
    worker failed its trial and queued it again meanwhile: the result it then tells is refused, and the
    retry plays the trial anew, so this worker drops it and goes on."""
    try:
        study.optimize(objective, n_trials=1)
    except ValueError as err:
        if not str(err).startswith("Cannot tell a FAIL trial"):  # Optuna's words for a trial failed by another
            raise
        log.warning("a trial this worker played was failed meanwhile as lost, and is retried: its result is dropped")


def publish_report(
    params: Params, study: optuna.Study, storage_url: str, metrics: dict, folder: Path, tags: dict | None = None
) -> None:
    """The report's files, `metrics` and `tags` on the study's parent run. With no trial running, the
    parent ends FINISHED (a `--report-only` on a new study included); a worker that resumes the study runs
    it again."""
    parent = parent_run(params, study, storage_url)
    log_to_run(params, parent, metrics, folder, tags)
    if not running_trials(study):
        set_run_status(params, parent, "FINISHED")


def running_trials(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=RUNNING))


def _worker_main(args: tuple, errors) -> None:
    """A worker process: its error goes to the parent, which names it (a traceback among progress bars
    is easily lost)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with sigterm_raises():  # not Lightning's exit status 0
            run_worker(*args)
    except BaseException as err:
        errors.send(traceback.format_exception_only(err)[-1].strip())
        raise


def run_workers(
    source: str | Params,
    storage_url: str,
    trials: int,
    first: int,
    jobs: int,
    prepare=sweep_trials,
    objective=Objective,
) -> list[str]:
    """`jobs` worker processes on this machine; one line for each that failed or was killed."""
    context = multiprocessing.get_context("spawn")
    pipes = {first + j: context.Pipe(duplex=False) for j in range(jobs)}  # (parent's end, worker's end)
    run = (source, storage_url, trials)
    processes = {
        worker: context.Process(target=_worker_main, args=((*run, worker, jobs, prepare, objective), end))
        for worker, (_, end) in pipes.items()
    }
    for process in processes.values():
        process.start()
    for process in processes.values():
        process.join()
    failed = []
    for worker, process in processes.items():
        if process.exitcode < 0:
            failed.append(f"sweep worker {worker} was killed by {signal.Signals(-process.exitcode).name}")
        elif process.exitcode > 0:
            reader = pipes[worker][0]
            reason = reader.recv() if reader.poll() else f"exit status {process.exitcode}"
            failed.append(f"sweep worker {worker} failed: {reason}")
    return failed
