"""An Optuna study of which search params make the strongest agent for a fixed compute budget, the
tuning Petosa & Balch name as its open gap (its command: `python -m pipeline sweep`).

The search space is `sweep.space` in params.yaml (dotted params paths: c_puct, Dirichlet alpha and
rollouts by default). Each trial trains from scratch in this process (`training_loop.py`) for
`sweep.generations` generations. Every trial's self-play spends the same network evaluations per
generation as the base params: with more rollouts per move it plays proportionally fewer games. After
each generation the network, searching with `sweep.eval_simulations` and the trial's own search params,
plays a fixed panel of reference opponents (`sweep.panel`) in every seat; its mean pairwise score is
the intermediate value a pruner watches and, after the last generation, the objective. The objective
`strength_and_compute` adds wall seconds of self-play and training as a second, minimised objective,
without pruning (Optuna prunes single-objective studies only).

Storage: `--storage`, else `sweep.storage`, else `$OPTUNA_STORAGE`, else `sqlite:///<project>/sweep.db`:
any Optuna database URL (`postgresql://...`) or `journal:<file>` (a journal file for workers on one
machine or a shared disk). The workers that run the trials, resume a study and retry a killed
worker's trial are `workers.py`. MLflow: a child run per trial, ending in the state Optuna holds.
"""

from __future__ import annotations

import tempfile
import uuid
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import optuna
from tqdm import tqdm

from pipeline import seeds
from pipeline.agents.names import baseline_spec
from pipeline.agents.recipes import champion_player, head_to_head_player
from pipeline.agents.spec import AgentSpec
from pipeline.config import ConfigError, Params
from pipeline.games import make_game
from pipeline.harness.tracking import (
    child_run,
    download_run_artifact,
)
from pipeline.matches.arena import mixed_seatings, pairwise_score, score_interval, seat_permutations
from pipeline.matches.workers import Workers, play_match, play_matches
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint
from pipeline.plumbing.owners import current as current_owner
from pipeline.sweeps.space import panel_players, param_value, trial_params
from pipeline.sweeps.storage import RUN_ID, WORKER, open_storage, storage_lock
from pipeline.sweeps.training_loop import GenerationReport, train_generations

FINISHED = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
# Steps are generations, counted from 1. The first generation's network is barely trained and its panel
# score mostly noise (a Connect-4 baseline scored 0.15, then 0.46): never prune on it.
FIRST_PRUNED_GENERATION = 2
BASELINE = "baseline"  # user attr of the trial that runs params.yaml's own values (the paper's defaults)
STUDY_UID = "study_uid"  # user attr of the first trial: the study's identity, unique even among equal names
VERSUS = "versus_baseline.json"  # the head-to-head's figures, in the report folder
CONFIRMED = "confirmation.json"  # `sweep --confirm`'s figures, in the report folder
CHECKPOINT = "network.ckpt"  # each complete trial's network, an artifact of its MLflow run
TRAINING_SEED = "training_seed"  # user attr of an enqueued trial that trains with this seed, not params.seed


def open_study(params: Params, storage, worker: int = 0) -> optuna.Study:
    sweep = params.sweep
    multi = sweep.objective == "strength_and_compute"
    if multi or sweep.pruner == "none":
        pruner: optuna.pruners.BasePruner = optuna.pruners.NopPruner()
    elif sweep.pruner == "median":
        pruner = optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=FIRST_PRUNED_GENERATION)
    else:
        first = min(FIRST_PRUNED_GENERATION, sweep.generations)
        pruner = optuna.pruners.HyperbandPruner(min_resource=first, max_resource=sweep.generations)
    study = optuna.create_study(
        study_name=params.sweep_study(),
        storage=storage,
        load_if_exists=True,
        directions=["maximize", "minimize"] if multi else ["maximize"],
        pruner=pruner,
    )
    name_metrics(study, ["strength", "seconds"] if multi else ["strength"])
    # Seeded per worker and per restart: a resumed worker must not replay its first random samples.
    seed = np.random.SeedSequence(seeds.sweep_sampler(params.seed, worker, len(study.trials))).generate_state(1)[0]
    study.sampler = optuna.samplers.TPESampler(seed=int(seed))
    return study


def suggest(trial: optuna.Trial, params: Params, space: dict | None = None) -> dict[str, Any]:
    """One value per dimension of `space` (default: `sweep.space`); integer params get integers."""
    values = {}
    for path, dim in (params.sweep.space if space is None else space).items():
        if dim.choices is not None:
            values[path] = trial.suggest_categorical(path, dim.choices)
        elif isinstance(param_value(params, path), int):
            values[path] = trial.suggest_int(path, round(dim.low), round(dim.high), log=dim.log)
        else:
            values[path] = trial.suggest_float(path, dim.low, dim.high, log=dim.log)
    return values


def panel_specs(params: Params, panel: list[str] | None = None, field: str = "sweep.panel") -> list[AgentSpec]:
    """The reference players of `panel` (default: `sweep.panel`), checked as `space.panel_players` does."""
    players = panel_players(params, panel, field)
    names = params.sweep.panel if panel is None else panel
    return [
        baseline_spec(player, text, params.evaluate.c_uct, params.seed + 1000 + i)
        for i, (player, text) in enumerate(zip(players, names))
    ]


def metric_name(opponent: str) -> str:
    return "vs_" + opponent.replace(":", "")


def panel_strength(
    game, model, params: Params, opponents: list[AgentSpec], simulations=None, games_per_seating=None, stream=None
) -> dict[str, float]:
    """Mean pairwise score (ties half) against each panel member over every seat, and their mean. The
    network searches `simulations` a move (default `sweep.eval_simulations`), `games_per_seating` games
    (default `sweep.games_per_seating`) against member k draw from `stream(k)` (default the sweep's)."""
    subject = champion_player("trained", model, params, simulations or params.sweep.eval_simulations)
    table = seat_permutations([0] + [1] * (game.num_players - 1))
    games_per_seating = games_per_seating or params.sweep.games_per_seating
    stream = stream or (lambda k: seeds.sweep_panel(params.seed, k))
    matches = []
    for k in range(len(opponents)):
        seatings = [[0 if seat == 0 else k + 1 for seat in seating] for seating in table]
        matches.append((seatings * games_per_seating, stream(k)))
    results = play_matches(
        game.name, [subject, *opponents], matches, params.selfplay.parallel_games, Workers.from_params(params)
    )
    scores = {metric_name(o.name): pairwise_score(r.records, "trained", o.name) for o, r in zip(opponents, results)}
    return {"strength": float(np.mean(list(scores.values()))), **scores}


class Objective:
    """One trial: suggest, train, measure after each generation, report, maybe prune."""

    def __init__(self, base: Params, parent_run: str, bar: tqdm):
        self.base, self.parent_run, self.bar = base, parent_run, bar
        self.game = make_game(base.game)
        self.opponents = panel_specs(base)
        self.multi = base.sweep.objective == "strength_and_compute"

    def __call__(self, trial: optuna.Trial):
        trial.set_user_attr(WORKER, current_owner())  # a re-run fails this trial at once if this process dies
        values = suggest(trial, self.base)
        params = trial_params(self.base, values, trial.user_attrs.get(TRAINING_SEED))  # a confirmation unit's seed
        last: dict[str, float] = {}
        tags = {"sweep_study": params.sweep_study(), "optuna_study": trial.study.study_name}
        tags |= {"optuna_trial": str(trial.number), "seed": str(params.seed)}
        tags |= {key: str(value) for key, value in trial.user_attrs.items() if key != WORKER}  # a unit's setting
        parent = self.parent_run
        with child_run(
            params, lambda client: parent, f"{trial.study.study_name} {trial.number}", tags, mirror=False
        ) as run:
            trial.set_user_attr(RUN_ID, run.run_id)  # ended FAILED by whoever fails this trial as lost
            run.log_params({**values, "selfplay.games": params.selfplay.games, "seed": params.seed})

            def on_generation(model, report: GenerationReport) -> None:
                strength = panel_strength(self.game, model, params, self.opponents)
                last.update(strength, seconds=report.seconds, generations=report.generation)
                self.bar.set_postfix_str(f"trial {trial.number} gen {report.generation}: {strength['strength']:.3f}")
                figures = {"simulations": report.simulations, "seconds": report.seconds, "games": report.games}
                figures |= {"policy_loss": report.policy_loss, "value_loss": report.value_loss}
                run.log_metrics({**strength, **figures}, step=report.generation)
                if not self.multi:
                    trial.report(strength["strength"], report.generation)
                    if trial.should_prune():
                        run.end("KILLED", optuna_state="PRUNED")
                        raise optuna.TrialPruned()

            budget = params.sweep.simulations_per_generation
            model = train_generations(self.game, params, params.sweep.generations, on_generation, budget)
            with tempfile.TemporaryDirectory() as folder:
                save_checkpoint(Path(folder) / CHECKPOINT, model, self.game.name)
                run.log_artifact(Path(folder) / CHECKPOINT)
            run.end("FINISHED", optuna_state="COMPLETE")
        trial.set_user_attr("seconds", last["seconds"])
        return (last["strength"], last["seconds"]) if self.multi else last["strength"]


def study_uid(study: optuna.Study) -> str:
    """The study's identity: a random id on its first trial, which exactly one worker creates. A study
    made before identities were kept has none ("")."""
    trials = study.get_trials(deepcopy=False)
    return trials[0].user_attrs.get(STUDY_UID, "") if trials else ""


def prepare_study(params: Params, storage_url: str, worker: int = 0) -> optuna.Study:
    """Open (or create) the study; the first trial plays params.yaml's own values: the baseline to beat."""
    storage = open_storage(storage_url)
    with storage_lock(storage_url):  # one worker at a time: the first creates the study and its baseline
        study = open_study(params, storage, worker)
        if not study.trials:
            baseline = {path: param_value(params, path) for path in params.sweep.space}
            study.enqueue_trial(baseline, user_attrs={BASELINE: True, STUDY_UID: uuid.uuid4().hex})
    return study


def sweep_trials(params: Params, storage_url: str, worker: int, trials: int) -> tuple[optuna.Study, optuna.Study, int]:
    """What a sweep worker works on: the study (whose MLflow parent its runs join), the study it runs
    trials of (here the same; a confirmation's differs) and how many finished trials it aims at."""
    study = prepare_study(params, storage_url, worker)
    return study, study, trials


def best_trial(study: optuna.Study) -> optuna.trial.FrozenTrial:
    """The strongest trial; with two objectives, the strongest on the Pareto front."""
    if len(study.directions) == 1:
        return study.best_trial
    return max(study.best_trials, key=lambda t: t.values[0])


def versus_baseline(study: optuna.Study, params: Params, games_per_seating: int) -> dict[str, float]:
    """The best trial's network against the baseline trial's, each searching with its own params and
    `sweep.eval_simulations`, with root noise and sampled openings (else two networks replay one game),
    over every seating where both sit at the table: the tuned agent's pairwise score with a 95% CI."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    baseline = next((t for t in complete if t.user_attrs.get(BASELINE)), None)
    if baseline is None:
        raise ConfigError(f"study {study.study_name!r}: the baseline trial has not completed yet")
    game = make_game(params.game)
    specs = []
    with tempfile.TemporaryDirectory() as folder:
        for name, trial in (("tuned", best_trial(study)), ("baseline", baseline)):
            path = download_run_artifact(params, trial.user_attrs[RUN_ID], CHECKPOINT, Path(folder) / name)
            model = load_checkpoint(path, game)
            own = trial_params(params, trial.params)
            specs.append(head_to_head_player(name, model, own, params.sweep.eval_simulations))
    seatings = mixed_seatings(game.num_players) * games_per_seating
    result = play_match(
        game.name, specs, seatings, seeds.sweep_versus_baseline(params.seed), params.selfplay.parallel_games, 0
    )
    figures = score_interval(result.records, "tuned", "baseline")
    return {**figures, "tuned_trial": best_trial(study).number, "baseline_trial": baseline.number}


def name_metrics(study: optuna.Study, names: list[str]) -> None:
    """What optuna-dashboard and Optuna's plots call each objective (else "Objective 0"); set once a study."""
    if study.metric_names != names:
        with warnings.catch_warnings():  # experimental since Optuna 3.2, stable in use
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(names)
