"""A sweep's answer confirmed by re-training: the best of many noisy trials is biased upward (it was
chosen for its luck as much as for its setting), so before anything is recommended the top settings and
the baseline are each trained again from fresh seeds and played against each other.

The units of work, one per (setting, training seed), are trials of a second Optuna study in the same
storage, `<study>:confirm`, enqueued with their fixed params: the sweep's workers run them (several
processes or machines, resumed after a kill, each a child run of the study's MLflow parent) and Optuna
keeps each network's panel strength. Then every trained network of each candidate plays every baseline
network, over every seating where both sit. The candidate's effect is its mean pairwise score against
the baseline, with a 95% interval from a bootstrap over both sides' training seeds and the games: the
spread between training runs is part of the answer, not only the games' noise.

The recommendation is the candidate with the best score whose lower bound is above 0.5; when none is,
the baseline stays.

With `sweep.confirm.ablate`, the best trial is also trained with each of its tuned params put back to
the baseline's value, one at a time ("trial 20 without search.c_puct"), and played against the baseline
the same way: the params whose removal costs the most carry the effect, measured by re-training rather
than read from one noisy run per trial (fANOVA). Ablations are reported beside, never recommended.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

import numpy as np
import optuna
from scipy import stats

from pipeline import seeds
from pipeline.agents.recipes import head_to_head_player
from pipeline.config import ConfigError, Params, current_paths
from pipeline.games import make_game
from pipeline.harness.tracking import download_run_artifact
from pipeline.matches.arena import mixed_seatings, pairwise_score
from pipeline.matches.workers import Workers, play_matches
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.sweeps.space import param_value, trial_params
from pipeline.sweeps.storage import RUN_ID, open_storage, storage_lock
from pipeline.sweeps.study import BASELINE, CHECKPOINT, TRAINING_SEED, open_study

SUFFIX = ":confirm"
SETTING = "confirm_setting"  # user attr: "baseline" or "trial N", the sweep trial whose params it re-trains
BASELINE_SETTING = "baseline"  # the setting of the sweep's baseline trial (the paper's params)
RESAMPLES = 4000  # bootstrap resamples of the interval
WITHOUT = " without "  # "trial N without PATH": trial N's params with PATH at the baseline's value


def open_confirmation(storage, study_name: str) -> optuna.Study:
    """The confirmation study: no pruning (every unit trains to the end), no sampling (every trial is
    enqueued with its params)."""
    return optuna.create_study(
        study_name=study_name + SUFFIX,
        storage=storage,
        load_if_exists=True,
        direction="maximize",
        pruner=optuna.pruners.NopPruner(),
    )


def candidates(study: optuna.Study, top: int, ablate: bool = False) -> list[tuple[str, dict]]:
    """The baseline and the `top` best complete trials of distinct params, as (setting, params); with
    `ablate`, also the best trial with each param that differs from the baseline's put back to it."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    baseline = next((t for t in complete if t.user_attrs.get(BASELINE)), None)
    if baseline is None:
        raise ConfigError(f"study {study.study_name!r}: its baseline trial has not completed yet; run the sweep first")
    chosen: list[tuple[str, dict]] = [(BASELINE_SETTING, current_paths(baseline.params))]
    for trial in sorted(complete, key=lambda t: t.values[0], reverse=True):
        values = current_paths(trial.params)
        if len(chosen) > top:
            break
        if all(values != other for _, other in chosen):
            chosen.append((f"trial {trial.number}", values))
    if len(chosen) == 1:
        raise ConfigError(f"study {study.study_name!r}: no complete trial besides the baseline to confirm yet")
    if ablate:
        (_, base), (best, values) = chosen[:2]
        chosen += [
            (f"{best}{WITHOUT}{path}", {**values, path: base[path]})
            for path in sorted(values)
            if path in base and values[path] != base[path]
        ]
    return chosen


def training_seeds(params: Params) -> list[int]:
    """Fresh seeds: the sweep's trials all trained with `seed`, the confirmation with the next ones."""
    return [params.seed + 1 + j for j in range(params.sweep.confirm.seeds)]


def prepare(params: Params, storage_url: str, worker: int, trials: int) -> tuple[optuna.Study, optuna.Study, int]:
    """The sweep's study, its confirmation study with every unit enqueued, and the number of units: what
    a sweep worker (`workers.run_worker`) needs to run the confirmation. Units already there are kept, so
    a larger `confirm.top` or more `confirm.seeds` add to a confirmation. (`trials` is the sweep's.)"""
    storage = open_storage(storage_url)
    study = open_study(params, storage, worker)
    confirm = open_confirmation(storage, study.study_name)
    with storage_lock(storage_url):  # one worker enqueues; the others find the units there
        have = {
            (t.user_attrs.get(SETTING), t.user_attrs.get(TRAINING_SEED)) for t in confirm.get_trials(deepcopy=False)
        }
        units = [
            (setting, values, seed)
            for setting, values in candidates(study, params.sweep.confirm.top, params.sweep.confirm.ablate)
            for seed in training_seeds(params)
        ]
        for setting, values, seed in units:
            if (setting, seed) not in have:
                confirm.enqueue_trial(values, user_attrs={SETTING: setting, TRAINING_SEED: seed})
    return study, confirm, len(units)


def unit_networks(params: Params, confirm: optuna.Study, folder: Path) -> dict[str, dict[int, tuple]]:
    """{setting: {seed: (network, the unit's params, panel strength)}} of every complete unit."""
    game = make_game(params.game)
    networks: dict[str, dict[int, tuple]] = {}
    for trial in confirm.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        setting, seed = trial.user_attrs[SETTING], trial.user_attrs[TRAINING_SEED]
        path = download_run_artifact(params, trial.user_attrs[RUN_ID], CHECKPOINT, folder / f"{trial.number}")
        own = trial_params(params, trial.params, seed)
        networks.setdefault(setting, {})[seed] = (load_checkpoint(path, game), own, trial.values[0])
    return networks


def seed_interval(per_seed: list[float]) -> tuple[float, float, float]:
    """Mean and a 95% t-interval over training seeds, cut to [0, 1], where a score lies (three seeds'
    t-interval reaches past both ends)."""
    values = np.asarray(per_seed, dtype=float)
    mean = float(values.mean())
    if len(values) < 2:
        return mean, float("nan"), float("nan")
    half = float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def bootstrap_interval(games: dict[tuple[int, int], np.ndarray], seed: list[int]) -> tuple[float, float]:
    """95% percentile interval of the mean score over (candidate seed, baseline seed) pairs, resampling
    candidate seeds, baseline seeds, and the games of each pair."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    mine = sorted({i for i, _ in games})
    theirs = sorted({j for _, j in games})
    means = np.empty(RESAMPLES)
    for b in range(RESAMPLES):
        picked_mine, picked_theirs = rng.choice(mine, len(mine)), rng.choice(theirs, len(theirs))
        pair_means = [rng.choice(games[i, j], len(games[i, j])).mean() for i in picked_mine for j in picked_theirs]
        means[b] = np.mean(pair_means)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def head_to_heads(params: Params, networks: dict, games_per_seating: int) -> dict[str, dict]:
    """Each candidate's every network against each baseline network: per candidate, its mean pairwise
    score with the bootstrap interval, the games, and its panel strength over seeds."""
    game = make_game(params.game)
    baseline = networks.get(BASELINE_SETTING, {})
    if not baseline:
        raise ConfigError("the confirmation has no complete baseline unit yet; run `sweep --confirm` again")
    table = mixed_seatings(game.num_players) * games_per_seating
    budget = params.sweep.eval_simulations
    results = {}
    for k, (setting, units) in enumerate(sorted(networks.items())):
        if setting == BASELINE_SETTING:
            continue
        mine, theirs = sorted(units), sorted(baseline)
        specs = [head_to_head_player(f"tuned@{i}", units[i][0], units[i][1], budget) for i in mine]
        specs += [head_to_head_player(f"baseline@{j}", baseline[j][0], baseline[j][1], budget) for j in theirs]
        pairs = list(itertools.product(range(len(mine)), range(len(theirs))))
        matches = [
            (
                [[a if seat == 0 else len(mine) + b for seat in seating] for seating in table],
                seeds.sweep_confirmation(params.seed, k, a, b),
            )
            for a, b in pairs
        ]
        played = play_matches(game.name, specs, matches, params.selfplay.parallel_games, Workers.from_params(params))
        games = {
            (a, b): np.array([pairwise_score([r], specs[a].name, specs[len(mine) + b].name) for r in result.records])
            for (a, b), result in zip(pairs, played)
        }
        low, high = bootstrap_interval(games, seeds.sweep_confirmation_interval(params.seed, k))
        panel = seed_interval([units[i][2] for i in mine])
        results[setting] = {
            "params": {path: param_value(units[mine[0]][1], path) for path in params.sweep.space},
            "score": float(np.mean([g.mean() for g in games.values()])),
            "ci95_low": low,
            "ci95_high": high,
            "games": int(sum(len(g) for g in games.values())),
            "seeds": len(mine),
            "baseline_seeds": len(theirs),
            "panel": panel[0],
            "panel_ci95_low": panel[1],
            "panel_ci95_high": panel[2],
        }
    return results


def recommendation(results: dict[str, dict]) -> str:
    """The confirmed setting: the best score whose interval lies above 0.5; else the baseline. Ablations
    are not candidates."""
    confirmed = [s for s, r in results.items() if r["ci95_low"] > 0.5 and WITHOUT not in s]
    return max(confirmed, key=lambda s: results[s]["score"]) if confirmed else BASELINE_SETTING


def confirm(params: Params, confirm_study: optuna.Study) -> dict:
    """The confirmation's figures: every candidate against the baseline, the baseline's own panel
    strength over seeds, and the recommended setting."""
    with tempfile.TemporaryDirectory() as folder:
        networks = unit_networks(params, confirm_study, Path(folder))
        results = head_to_heads(params, networks, params.sweep.confirm.games_per_seating)
    baseline = networks[BASELINE_SETTING]
    panel = seed_interval([baseline[s][2] for s in sorted(baseline)])
    return {
        "candidates": results,
        "baseline": {
            "panel": panel[0],
            "panel_ci95_low": panel[1],
            "panel_ci95_high": panel[2],
            "seeds": len(baseline),
        },
        "recommended": recommendation(results),
    }


def metrics(figures: dict) -> dict[str, float]:
    """The confirmation's headline for the study's MLflow parent: the recommended setting's score against
    the baseline, none where the baseline stays (every candidate's row is in the report's JSON, an
    artifact of the same run)."""
    row = figures["candidates"].get(figures["recommended"], {})
    return {f"confirmed_{key}": row[key] for key in ("score", "ci95_low", "ci95_high", "panel") if key in row}
