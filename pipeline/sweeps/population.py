"""Population-based training (Jaderberg et al. 2017), as Wu, Wei & Wu (2020) tuned AlphaZero with it:
`sweep.population.members` runs of generations side by side, on Ray Tune's `PopulationBasedTraining`
(its command: `python -m pipeline sweep --population`).

A member is a run of generations without a gate, as a sweep trial's (`training_loop.py`): self-play, the
replay window, training. Its settings are a point of `sweep.population.space`; its seed is its own, drawn
from `params.seed` and its number. Every `interval` generations it plays the panel (`fitness`: the mean or
the weakest of its pairwise scores, on games every member plays at that generation) and reports with a
checkpoint of all it needs to go on: network, replay window, generation, settings and spent compute. Its
optimiser starts afresh each generation, as in every run of this project, so there is none to keep; its
random state is its seed and generation. Ray Tune then copies a top member's checkpoint into a bottom
member (exploit) and perturbs or redraws that member's settings (explore), kept inside the space here.

Ray Tune owns the schedule, the folder (`--dir`, one sub-folder per population) and resuming: a driver
killed at any moment resumes from that folder, and a member whose process dies restarts from its last
checkpoint (`max_failures`). The members share this machine's cores, one each, or a Ray cluster's.
"""

from __future__ import annotations

import json
import logging
import os
import random
import tempfile
import time
import uuid
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from ray import tune
from ray.tune.schedulers import PopulationBasedTraining
from ray.tune.search.basic_variant import BasicVariantGenerator

from pipeline import seeds
from pipeline.config import ConfigError, Params
from pipeline.games import make_game
from pipeline.harness.tracking import (
    log_step,
    logged_steps,
    population_member_run,
    set_run_status,
    settle_runs,
    sweep_parent_run,
)
from pipeline.jobs.replay import empty_samples, load_samples, save_samples
from pipeline.matches.ray_backend import connect
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint, weights_digest
from pipeline.nets.senet import initial_network
from pipeline.plumbing.atomic import write_json
from pipeline.plumbing.progress import progress_bar
from pipeline.plumbing.threads import use_threads
from pipeline.sweeps.space import POPULATION_PANEL, is_integer, param_value, trial_params
from pipeline.sweeps.study import panel_specs, panel_strength
from pipeline.sweeps.training_loop import play_and_train

NETWORK = "network.ckpt"  # in a member's checkpoint folder: the project's checkpoint, which play and match take
WINDOW = "window.npz"  # its replay window
MEMBER = "member.json"  # its `MemberState`
IDENTITY = "population.json"  # in the population's folder: the params it was started with and its MLflow id
REPORTS = "reports.jsonl"  # in the population's folder: every member report a driver got, a line each
# Checkpoints kept a member: exploit copies a top member's latest, which may be one report old by the time
# the copy is made (Ray Tune warns below 3).
KEPT = 3


@dataclass
class MemberState:
    """What a member's checkpoint says of it beside its network and window."""

    member: int  # whose run wrote the checkpoint: another member's number in a copied one
    generation: int
    values: dict  # its settings, the space's paths
    simulations: int = 0  # self-play simulations of the lineage behind the network
    seconds: float = 0.0  # wall seconds of its self-play and training
    lineage: list = field(default_factory=list)  # [generation, member] of every copy behind the network


def member_index(trial_id: str) -> int:
    """A member's number: Ray Tune's trial ids end in the trial's index, `5f0a1_00003`."""
    return int(trial_id.rsplit("_", 1)[-1])


def member_folder(trial) -> str:
    return f"member_{member_index(trial.trial_id)}"


def member_seed(base_seed: int, member: int) -> int:
    return int(np.random.SeedSequence(seeds.population_member(base_seed, member)).generate_state(1)[0])


def member_params(base: Params, values: dict, member: int) -> Params:
    """The base params with a member's settings (self-play games rescaled to the same cost a generation,
    as a sweep trial's) and its own seed, on one worker."""
    params = trial_params(base, values, member_seed(base.seed, member))
    return params.model_copy(update={"workers": 1})


def domains(base: Params) -> dict:
    """Ray Tune's distribution of each dimension: drawn for a member's start and explore's redraws."""
    result = {}
    for path, dim in base.sweep.population.space.items():
        if dim.choices is not None:
            result[path] = list(dim.choices)
        elif is_integer(base, path):
            low, high = round(dim.low), round(dim.high)
            result[path] = tune.lograndint(low, high + 1) if dim.log else tune.randint(low, high + 1)
        else:
            result[path] = tune.loguniform(dim.low, dim.high) if dim.log else tune.uniform(dim.low, dim.high)
    return result


class InsideSpace:
    """Explore's last step: Ray Tune perturbs a value by x1.2 or x0.8, which may leave its range or make
    an integer a float; this puts it back at the nearest bound and rounds integers."""

    def __init__(self, base: Params):
        self.bounds = {
            path: (dim.low, dim.high, is_integer(base, path))
            for path, dim in base.sweep.population.space.items()
            if dim.choices is None
        }

    def __call__(self, config: dict) -> dict:
        for path, (low, high, integer) in self.bounds.items():
            value = min(max(config[path], low), high)
            config[path] = round(value) if integer else float(value)
        return config


def baseline_values(base: Params) -> dict:
    """Member 0 starts from the params' own values, as a sweep's first trial does."""
    return {path: param_value(base, path) for path in base.sweep.population.space}


def fitness(strength: dict[str, float], how: str) -> float:
    scores = [value for key, value in strength.items() if key != "strength"]
    return float(np.mean(scores) if how == "mean" else np.min(scores))


def save_member(folder: Path, model, samples: dict, state: MemberState, game_name: str) -> None:
    save_checkpoint(folder / NETWORK, model, game_name)
    save_samples(folder / WINDOW, samples)
    write_json(folder / MEMBER, asdict(state))


def load_member(folder: Path, game):
    """A member's checkpoint. One whose replay window was left out (a study shipped as networks and metrics,
    without self-play data) goes on with an empty window, which its next generations fill again."""
    model = load_checkpoint(folder / NETWORK, game)
    samples = load_samples(folder / WINDOW) if (folder / WINDOW).exists() else empty_samples(game)
    return model, samples, MemberState(**json.loads((folder / MEMBER).read_text()))


def start_member(folder: Path | None, game, params: Params, member: int, values: dict):
    """Where member `member` starts: fresh, or from the checkpoint in `folder`: its own (a restart), or a
    top member's that exploit copied in, whose network and window it takes with its own seed and the
    settings explore gave it. Returns the network, the window, the state and the member copied (-1: none)."""
    if folder is None:
        return initial_network(game, params), empty_samples(game), MemberState(member, 0, values), -1
    model, samples, state = load_member(folder, game)
    copied_from = state.member if state.member != member else -1
    if copied_from >= 0:
        state.lineage.append([state.generation, state.member])
    state.member, state.values = member, values
    return model, samples, state, copied_from


def train_member(config: dict, base: Params) -> None:
    """Ray Tune's function trainable: one member, from its checkpoint (its own, or a top member's that
    exploit copied in) to `generations`, reporting every `interval` generations."""
    use_threads(1)  # a member is given one core
    population = base.sweep.population
    game = make_game(base.game)
    member = member_index(tune.get_context().get_trial_id())
    values = {path: config[path] for path in population.space}
    params = member_params(base, values, member)
    opponents = panel_specs(params, population.panel, POPULATION_PANEL)
    checkpoint = tune.get_checkpoint()
    if checkpoint is None:
        model, samples, state, copied_from = start_member(None, game, params, member, values)
    else:
        with checkpoint.as_directory() as folder:
            model, samples, state, copied_from = start_member(Path(folder), game, params, member, values)
    restored = weights_digest(model.state_dict())
    while state.generation < population.generations:
        started, simulations, games = time.perf_counter(), 0, 0
        for _ in range(population.interval):
            state.generation += 1
            samples, selfplay, train = play_and_train(game, model, samples, params, state.generation)
            simulations += selfplay.simulations
            games += selfplay.games
        trained = time.perf_counter()
        generation = state.generation
        strength = panel_strength(
            game,
            model,
            params,
            opponents,
            population.eval_simulations,
            population.games_per_seating,
            lambda k, generation=generation: seeds.population_panel(base.seed, generation, k),
        )
        state.simulations += simulations
        state.seconds += trained - started
        metrics = {
            "fitness": fitness(strength, population.fitness),
            **{key: value for key, value in strength.items() if key != "strength"},
            "generation": generation,
            "member": member,
            "copied_from": copied_from,  # this report's network began from that member's (-1: its own)
            "restored_weights": restored,
            "weights": weights_digest(model.state_dict()),
            "games": games,
            "interval_simulations": simulations,  # compute this process spent: a population's total
            "interval_seconds": trained - started,
            "eval_seconds": time.perf_counter() - trained,
            "lineage_simulations": state.simulations,
            "policy_loss": train.policy_loss,
            "value_loss": train.value_loss,
            "lineage": json.dumps(state.lineage),
            **values,
        }
        with tempfile.TemporaryDirectory() as folder:
            save_member(Path(folder), model, samples, state, game.name)
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(folder))
        copied_from, restored = -1, metrics["weights"]


def schedule(results, folder: Path) -> pd.DataFrame:
    """Every report of every member, in order: generation, fitness, panel scores, settings, copies. Read
    from each member's `result.json`, which Ray Tune appends to across restarts (its progress table
    starts again from a restored checkpoint and loses the reports after it), and from the reports the
    drivers kept (`REPORTS` in `folder`: result.json lost the last report of a member that finished as
    the population ended)."""
    paths = [Path(result.path) / "result.json" for result in results] + [folder / REPORTS]
    reports = member_reports(paths)
    if not reports:
        return pd.DataFrame()
    rows = pd.DataFrame(reports).drop_duplicates(["member", "generation", "timestamp"])
    return rows.sort_values(["member", "timestamp"], kind="stable").reset_index(drop=True)


def member_reports(paths) -> list[dict]:
    """The reports in the members' `result.json` files at `paths` (those that exist), less their config."""
    reports = []
    for path in paths:
        if path.exists():
            reports += [_parsed(line) for line in path.read_text().splitlines() if line.strip()]
    return [{k: v for k, v in report.items() if k != "config"} for report in reports if "member" in report]


def _parsed(line: str) -> dict:
    """A report line; {} for the last line of a driver killed as it wrote it."""
    try:
        return json.loads(line)
    except ValueError:
        return {}


def reported_generations(folder: Path) -> dict[int, int]:
    """Each member's latest generation reported in `folder`: where a resumed population's bar starts."""
    latest: dict[int, int] = {}
    for report in member_reports([*folder.glob("*/result.json"), folder / REPORTS]):
        member = int(report["member"])
        latest[member] = max(latest.get(member, 0), int(report["generation"]))
    return latest


def _plain(value):
    """A number Ray Tune reports as a numpy scalar, as JSON's; anything else as its text."""
    return value.item() if hasattr(value, "item") else str(value)


def identity(base: Params) -> dict:
    """What makes a population folder this population's: every param its members read."""
    return {"params": base.model_dump(mode="json", exclude={"threads", "workers", "backend", "tracking", "device"})}


def open_folder(base: Params, folder: Path) -> str:
    """The population's folder, made or found again; its MLflow identity. A folder that holds a population
    of other params is refused: resuming it would mix two studies."""
    path = folder / IDENTITY
    wanted = identity(base)
    if path.exists():
        held = json.loads(path.read_text())
        if held["identity"] != wanted:
            raise ConfigError(
                f"{folder}: holds a population started with other params; give another --dir or study name"
            )
        return held["uid"]
    uid = uuid.uuid4().hex
    write_json(path, {"identity": wanted, "uid": uid})
    return uid


def tuner(base: Params, folder: Path, callbacks: list) -> tune.Tuner:
    """A new population in `folder`, or the one there resumed where it stopped."""
    population = base.sweep.population
    trainable = tune.with_resources(tune.with_parameters(train_member, base=base), {"cpu": 1})
    if tune.Tuner.can_restore(str(folder)):
        return tune.Tuner.restore(str(folder), trainable, resume_unfinished=True, resume_errored=True)
    scheduler = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=1,  # an iteration is `interval` generations
        hyperparam_mutations=domains(base),
        quantile_fraction=population.quantile,
        resample_probability=population.resample,
        custom_explore_fn=InsideSpace(base),
        # Asynchronous: a member is compared with the others' latest reports when it reports. Ray Tune's
        # synchronous rounds hung a resumed population (a killed driver's) in a test run.
    )
    searcher = BasicVariantGenerator(points_to_evaluate=[baseline_values(base)], random_state=base.seed)
    return tune.Tuner(
        trainable,
        param_space=domains(base),
        tune_config=tune.TuneConfig(
            metric="fitness",
            mode="max",
            scheduler=scheduler,
            search_alg=searcher,
            num_samples=population.members,
            reuse_actors=False,
            trial_dirname_creator=member_folder,
        ),
        run_config=tune.RunConfig(
            name=folder.name,
            storage_path=str(folder.parent),
            failure_config=tune.FailureConfig(max_failures=population.max_failures),
            checkpoint_config=tune.CheckpointConfig(num_to_keep=KEPT),
            callbacks=callbacks,
            verbose=0,
        ),
    )


@dataclass
class Driver:
    """The process that runs the population now: its params (their tracking URI may differ from the first
    driver's, on a new machine), MLflow parent run, identity and progress bar."""

    base: Params
    parent_run: str
    uid: str
    bar: object
    folder: Path
    runs: dict = field(default_factory=dict)  # member -> its MLflow run
    seen: dict = field(default_factory=dict)  # member -> latest generation reported

    def keep(self, report) -> None:
        """The report as the driver got it, a line of `REPORTS` in the population's folder."""
        line = json.dumps({k: v for k, v in report.items() if k != "config"}, default=_plain)
        with (self.folder / REPORTS).open("a") as handle:
            handle.write(line + "\n")

    def log(self, report) -> None:
        """One member report in its MLflow run, at its generation."""
        member, generation = int(report["member"]), int(report["generation"])
        names = ["fitness", "policy_loss", "value_loss", "games", "lineage_simulations"]
        metrics = {name: report[name] for name in names}
        metrics |= {key: report[key] for key in report.keys() if key.startswith("vs_")}
        metrics |= {f"setting.{path}": report[path] for path in self.base.sweep.population.space}
        tags = {"lineage": report["lineage"]}
        if report["copied_from"] >= 0:
            tags[f"copied_at_generation_{generation - self.base.sweep.population.interval}"] = report["copied_from"]
        log_step(self.base, self.run_of(member), metrics, generation, tags)

    def log_missing(self, rows) -> None:
        """The reports MLflow does not hold: those a killed driver had not logged yet when it died."""
        for member, own in rows.groupby("member") if len(rows) else []:
            logged = logged_steps(self.base, self.run_of(int(member)), "fitness")
            for _, report in own[~own["generation"].isin(logged)].iterrows():
                self.log(report)

    def run_of(self, member: int) -> str:
        if member not in self.runs:
            name = f"{self.base.population_study()} member {member}"
            self.runs[member] = population_member_run(self.base, self.parent_run, self.uid, member, name)
        return self.runs[member]


class Progress(tune.Callback):
    """The driver's view of the members' reports: a progress bar over every member's generations, and
    MLflow, one child run per member under the population's parent run: its fitness, panel scores and
    losses per generation, its settings as metrics (they change), its copies as tags.

    Ray Tune pickles its callbacks with the population and a resumed driver gets them back from there, so
    the callback holds nothing of a driver: it reports to `Progress.driver`, the one running now."""

    driver: Driver | None = None

    def on_trial_result(self, iteration, trials, trial, result, **info):
        driver, member, generation = Progress.driver, int(result["member"]), int(result["generation"])
        driver.bar.update(max(0, generation - driver.seen.get(member, 0)))
        driver.seen[member] = generation
        driver.bar.set_postfix_str(f"member {member} gen {generation}: {result['fitness']:.3f}")
        driver.keep(result)
        driver.log(result)

    def on_trial_complete(self, iteration, trials, trial, **info):
        driver = Progress.driver
        settle_runs(driver.base, [driver.run_of(member_index(trial.trial_id))], "FINISHED")


def run_population(base: Params, folder: Path) -> tune.ResultGrid:
    """Run (or resume) the population in `folder` to its last generation; Ray on this machine, or the
    cluster at `backend.ray_address`."""
    random.seed(base.seed)  # Ray Tune's explore draws from Python's `random`
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # its tables at verbose 0 say nothing our bar does not
    logging.getLogger("ray.tune").setLevel(logging.ERROR)  # nor do its notes on files not written yet
    # A function trainable cannot reset its config in place: a copied member's process starts again
    warnings.filterwarnings("ignore", "Consider boosting PBT performance", UserWarning)
    uid = open_folder(base, folder)
    parent = sweep_parent_run(base, base.population_study(), uid, base.sweep.population.model_dump())
    connect(base.backend.ray_address)
    population = base.sweep.population
    seen = reported_generations(folder)
    total = population.members * population.generations
    bar = progress_bar(total=total, initial=sum(seen.values()), desc="population generations")
    try:
        set_run_status(base, parent, "RUNNING")
        Progress.driver = Driver(base, parent, uid, bar, folder, seen=seen)
        results = tuner(base, folder, [Progress()]).fit()
        Progress.driver.log_missing(schedule(results, folder))
    finally:
        bar.close()
    set_run_status(base, parent, "FAILED" if results.errors else "FINISHED")
    return results
