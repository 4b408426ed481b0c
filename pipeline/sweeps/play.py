"""How one trained network should search at play time: an Optuna study of its `search.*` settings, the
network fixed (`python -m pipeline sweep --play NETWORK`). Chen et al. ("Bayesian Optimization in
AlphaGo", 2018) tuned AlphaGo's search this way, the mix of value network and rollouts among it, and the
tuned player won 66.5% of its games against the untuned one.

A trial is one setting of `sweep.play.space`. The network searches with it at `sweep.play.move_time`
seconds a move (or `sweep.play.simulations`), alone against each member of `sweep.play.panel` in every
other seat, over every seat order. `shipped` in the panel is the same network searching as it plays
untuned: as its params say, or a shipped champion as its card says whatever `--params` holds (Chen et
al.'s yardstick). Every trial plays the same games: rung r against member k draws
`seeds.play_sweep_games(seed, k, r)` (common random numbers), so trials differ by their setting, not by
their deals. Trials grow under successive halving: `min_games` against each member, then `reduction_factor`
times as many while they stay in the top 1/factor of the trials that got there. A trial's figure is its
mean pairwise score over the panel members, with a 95% interval.

`--confirm` plays the top settings and the shipped one again, `confirm.games` games against each member
and against the shipped setting, on seeds no trial used (`seeds.play_confirmation_games`); blocks of
those games are trials of `<study>:confirm`, so workers, kills and resumes work as for the study. A
setting's difference from the shipped one is paired game by game (the same deals and seat orders); the
recommendation is the best setting whose difference has a 95% lower bound above 0, else the shipped one.
"""

from __future__ import annotations

import json
import math
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from pipeline import seeds
from pipeline.agents.names import BASELINES, baseline_spec, parse_player
from pipeline.agents.recipes import champion_player, head_to_head_player
from pipeline.config import PLAY_SHIPPED, ConfigError, Params, current_paths
from pipeline.games import make_game
from pipeline.harness.tracking import child_run
from pipeline.jobs.selfplay import random_openings
from pipeline.matches.arena import pairwise_score, seat_permutations
from pipeline.matches.workers import Workers, play_match
from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint
from pipeline.plumbing.owners import current as current_owner
from pipeline.sweeps.confirmation import open_confirmation
from pipeline.sweeps.space import param_value, with_overrides
from pipeline.sweeps.storage import RUN_ID, WORKER, open_storage, storage_lock
from pipeline.sweeps.study import BASELINE, STUDY_UID, name_metrics, suggest

SCORES = "scores "  # user attr prefix: a trial's per-game pairwise scores against one opponent, in game order
SETTING = "setting"  # confirmation unit: "shipped" or "trial N"
VALUES = "values"  # confirmation unit: its setting's search values, by dotted path
OPPONENT = "opponent"  # confirmation unit: whom it plays (a panel member, or the shipped setting)
BLOCK = "block"  # confirmation unit: which block of games
CONFIRMED = "play_confirmation.json"  # the confirmation's figures, in the report folder


def study_name(params: Params, network: str) -> str:
    return params.sweep.play.study or f"{Path(network).stem}-play"


def seat_orders(game) -> list[list[int]]:
    """The tuned player (0) alone, the opponent (1) in every other seat, every seat order."""
    return seat_permutations([0] + [1] * (game.num_players - 1))


def block_games(games: int, orders: int) -> int:
    """`games` rounded up to whole rounds of seat orders, so every seat is played as often."""
    return orders * math.ceil(games / orders)


def figure(scores: dict[str, list[float]]) -> dict[str, float]:
    """Mean pairwise score over the opponents (each opponent's mean counting once) with a normal 95%
    interval, cut to [0, 1]; nan bounds before two games."""
    means = [float(np.mean(s)) for s in scores.values()]
    variance = sum(np.var(s, ddof=1) / len(s) for s in scores.values() if len(s) > 1) / len(scores) ** 2
    mean = float(np.mean(means))
    half = 1.96 * math.sqrt(variance) if all(len(s) > 1 for s in scores.values()) else float("nan")
    return {"score": mean, "ci95_low": max(0.0, mean - half), "ci95_high": min(1.0, mean + half)}


class Table:
    """One network at one table: games of a search setting against an opponent. Against a baseline the
    network plays its most visited move, as a champion; against the shipped setting both sides sample
    their opening moves with root noise, as `match` plays two networks, else they replay one game."""

    def __init__(self, network: str, params: Params):
        self.params = params
        self.game = make_game(checkpoint_game(network))
        self.model = load_checkpoint(network, self.game)
        self.orders = seat_orders(self.game)

    def play(self, values: dict[str, Any], opponent: str, seed: list[int], games: int, label: str) -> list[float]:
        """Pairwise scores, one a game, of the network searching with `values` against `opponent`."""
        play = self.params.sweep.play
        mine = with_overrides(self.params, values)
        budget = (play.simulations, play.move_time)
        if opponent == PLAY_SHIPPED:
            specs = [
                head_to_head_player("tuned", self.model, mine, *budget),
                head_to_head_player(PLAY_SHIPPED, self.model, self.params, *budget),
            ]
        else:
            specs = [
                champion_player("tuned", self.model, mine, *budget),
                baseline_spec(
                    parse_player(opponent, BASELINES), opponent, self.params.evaluate.c_uct, self.params.seed
                ),
            ]
        timed = any(spec.play.seconds > 0 for spec in specs)
        rounds = block_games(games, len(self.orders)) // len(self.orders)
        result = play_match(
            self.game.name,
            specs,
            self.orders * rounds,
            seed,
            1 if timed else self.params.selfplay.parallel_games,
            Workers.from_params(self.params),
            progress=label,
            starts=self.openings(rounds, seed),
        )
        return [pairwise_score([record], "tuned", opponent) for record in result.records]

    def openings(self, rounds: int, seed: list[int]) -> list | None:
        """Each game's first position under `opening_plies`, the same for every seat order of a round, so
        an opening that favours a seat favours each side once; None: the initial position. Where strong
        players decide a game from its first move (Connect-4's first player wins), openings give the
        settings something to decide."""
        drawn = random_openings(self.game, rounds, self.params.sweep.play.opening_plies, seeds.play_openings(seed))
        return None if drawn is None else [opening for opening in drawn for _ in self.orders]


def shipped_values(params: Params) -> dict[str, Any]:
    return {path: param_value(params, path) for path in params.sweep.play.space}


def open_play_study(params: Params, storage, network: str, worker: int = 0) -> optuna.Study:
    play = params.sweep.play
    pruner = optuna.pruners.SuccessiveHalvingPruner(
        min_resource=play.min_games, reduction_factor=play.reduction_factor, min_early_stopping_rate=0
    )
    study = optuna.create_study(
        study_name=study_name(params, network),
        storage=storage,
        load_if_exists=True,
        direction="maximize",
        pruner=pruner,
    )
    name_metrics(study, ["score"])
    # Seeded per worker and per restart, as the training sweep's: a resumed worker draws new settings.
    entropy = seeds.sweep_sampler(params.seed, worker, len(study.trials))
    study.sampler = optuna.samplers.TPESampler(seed=int(np.random.SeedSequence(entropy).generate_state(1)[0]))
    return study


def prepare(network: str, params: Params, storage_url: str, worker: int, trials: int):
    """The study and the trial target a sweep worker (`workers.run_worker`) works on; the first trial is the
    shipped setting, the one to beat."""
    storage = open_storage(storage_url)
    with storage_lock(storage_url):
        study = open_play_study(params, storage, network, worker)
        if not study.trials:
            study.enqueue_trial(shipped_values(params), user_attrs={BASELINE: True, STUDY_UID: uuid.uuid4().hex})
    return study, study, trials


class Objective:
    """One trial: a setting, played rung by rung against every panel member on the study's games."""

    def __init__(self, network: str, params: Params, parent_run: str, bar):
        self.table, self.params, self.parent_run, self.bar = Table(network, params), params, parent_run, bar

    def __call__(self, trial: optuna.Trial) -> float:
        trial.set_user_attr(WORKER, current_owner())
        play = self.params.sweep.play
        values = suggest(trial, self.params, play.space)
        tags = {"sweep_study": trial.study.study_name, "optuna_study": trial.study.study_name}
        tags |= {"optuna_trial": str(trial.number), "sweep_kind": "play"}
        with child_run(
            self.params, lambda client: self.parent_run, f"{trial.study.study_name} {trial.number}", tags, mirror=False
        ) as run:
            trial.set_user_attr(RUN_ID, run.run_id)
            run.log_params(values)
            scores: dict[str, list[float]] = {member: [] for member in play.panel}
            rungs = play.rungs()
            for r, games in enumerate(rungs):
                for k, member in enumerate(play.panel):
                    wanted = block_games(games, len(self.table.orders)) - len(scores[member])
                    label = f"trial {trial.number} vs {member}"
                    scores[member] += self.table.play(values, member, seeds.play_sweep_games(self.params.seed, k, r),
                                                      wanted, label)  # fmt: skip
                    trial.set_user_attr(SCORES + member, scores[member])
                now = figure(scores)
                played = len(scores[play.panel[0]])
                self.bar.set_postfix_str(f"trial {trial.number}, {played} games: {now['score']:.3f}")
                run.log_metrics({**now, **{_metric(m): float(np.mean(s)) for m, s in scores.items()}}, step=played)
                trial.report(now["score"], played)
                if r < len(rungs) - 1 and trial.should_prune():
                    run.end("KILLED", optuna_state="PRUNED")
                    raise optuna.TrialPruned()
            run.end("FINISHED", optuna_state="COMPLETE")
        return now["score"]


def _metric(member: str) -> str:
    return "vs_" + member.replace(":", "").replace(".", "_")


def trial_scores(trial: optuna.trial.FrozenTrial) -> dict[str, list[float]]:
    return {key.removeprefix(SCORES): value for key, value in trial.user_attrs.items() if key.startswith(SCORES)}


# The confirmation.


def candidates(study: optuna.Study, params: Params) -> list[tuple[str, dict]]:
    """The shipped setting, then the `confirm.top` best complete trials of distinct settings. A setting is
    a trial's values on the space's paths: a path the space has dropped since (the root noise, refused
    now) is left as the params say, so what is confirmed is what the space can tune."""
    space = params.sweep.play.space
    chosen: list[tuple[str, dict]] = [(PLAY_SHIPPED, shipped_values(params))]
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    for trial in sorted(complete, key=lambda t: t.values[0], reverse=True):
        if len(chosen) > params.sweep.play.confirm.top:
            break
        values = {path: value for path, value in current_paths(trial.params).items() if path in space}
        if all(values != other for _, other in chosen):
            chosen.append((f"trial {trial.number}", values))
    if len(chosen) == 1:
        raise ConfigError(f"study {study.study_name!r}: no complete trial of another setting to confirm yet")
    return chosen


def opponents(params: Params) -> list[str]:
    """What the confirmation plays: the panel, and the shipped setting where the panel lacks it."""
    panel = params.sweep.play.panel
    return panel if PLAY_SHIPPED in panel else [*panel, PLAY_SHIPPED]


def units(params: Params, chosen: list[tuple[str, dict]], orders: int) -> list[dict]:
    """Every (setting, opponent, block) of games; the shipped setting does not play itself (0.5)."""
    play = params.sweep.play
    size = block_games(play.min_games, orders)
    blocks = math.ceil(play.confirm.games / size)
    return [
        {SETTING: setting, VALUES: json.dumps(values), OPPONENT: opponent, BLOCK: b}
        for setting, values in chosen
        for opponent in opponents(params)
        if not (setting == PLAY_SHIPPED and opponent == PLAY_SHIPPED)
        for b in range(blocks)
    ]


def prepare_confirmation(network: str, params: Params, storage_url: str, worker: int, trials: int):
    """The study, its confirmation study with every unit enqueued, and the number of units."""
    storage = open_storage(storage_url)
    study = open_play_study(params, storage, network, worker)
    confirm = open_confirmation(storage, study.study_name)
    orders = len(seat_orders(make_game(checkpoint_game(network))))
    with storage_lock(storage_url):
        have = {
            (t.user_attrs.get(SETTING), t.user_attrs.get(OPPONENT), t.user_attrs.get(BLOCK)) for t in confirm.trials
        }
        wanted = units(params, candidates(study, params), orders)
        for unit in wanted:
            if (unit[SETTING], unit[OPPONENT], unit[BLOCK]) not in have:
                confirm.enqueue_trial({}, user_attrs=unit)
    return study, confirm, len(wanted)


class ConfirmationUnit:
    """One block of the confirmation's games: a setting against an opponent on fresh seeds."""

    def __init__(self, network: str, params: Params, parent_run: str, bar):
        self.table, self.params, self.parent_run, self.bar = Table(network, params), params, parent_run, bar

    def __call__(self, trial: optuna.Trial) -> float:
        trial.set_user_attr(WORKER, current_owner())
        unit = trial.user_attrs
        setting, opponent, block = unit[SETTING], unit[OPPONENT], unit[BLOCK]
        tags = {"sweep_study": trial.study.study_name, "optuna_study": trial.study.study_name, "sweep_kind": "play"}
        tags |= {"confirm_setting": setting, "opponent": opponent, "block": str(block)}
        with child_run(self.params, lambda client: self.parent_run, f"{setting} vs {opponent} #{block}", tags,
                       mirror=False) as run:  # fmt: skip
            trial.set_user_attr(RUN_ID, run.run_id)
            run.log_params(json.loads(unit[VALUES]))  # the setting's values, as its trial's run has them
            k = opponents(self.params).index(opponent)
            size = block_games(self.params.sweep.play.min_games, len(self.table.orders))
            scores = self.table.play(json.loads(unit[VALUES]), opponent,
                                     seeds.play_confirmation_games(self.params.seed, k, block), size,
                                     f"{setting} vs {opponent} #{block}")  # fmt: skip
            trial.set_user_attr(SCORES + opponent, scores)
            run.log_metrics({"score": float(np.mean(scores))})
            run.end("FINISHED", optuna_state="COMPLETE")
        return float(np.mean(scores))


def confirm(params: Params, confirm_study: optuna.Study) -> dict:
    """Every confirmed setting's scores against each opponent, its figure, its paired difference from
    the shipped setting, and the recommendation."""
    games: dict[str, dict[str, dict[int, list[float]]]] = {}
    values: dict[str, dict] = {}
    for trial in confirm_study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        unit = trial.user_attrs
        values[unit[SETTING]] = json.loads(unit[VALUES])
        games.setdefault(unit[SETTING], {}).setdefault(unit[OPPONENT], {})[unit[BLOCK]] = unit[SCORES + unit[OPPONENT]]
    if not games:
        raise ConfigError("the confirmation has no complete block of games yet; run it again")
    against = opponents(params)
    flat = {
        s: {o: [x for b in sorted(blocks) for x in blocks[b]] for o, blocks in by.items()} for s, by in games.items()
    }
    longest = max(len(scores) for by in flat.values() for scores in by.values())
    shipped = flat[PLAY_SHIPPED] = {**flat.get(PLAY_SHIPPED, {}), PLAY_SHIPPED: [0.5] * longest}  # against itself
    values.setdefault(PLAY_SHIPPED, shipped_values(params))
    if set(shipped) != set(against):
        raise ConfigError("the confirmation has not played every opponent of the shipped setting yet; run it again")
    results = {}
    for setting, scores in flat.items():
        if setting != PLAY_SHIPPED and set(scores) != set(against):
            continue  # not every opponent played yet
        row = {"values": values[setting], **figure(scores)}
        row["opponents"] = {o: {"score": float(np.mean(s)), "games": len(s), **_interval(s)} for o, s in scores.items()}
        if setting != PLAY_SHIPPED:
            row |= _difference(scores, shipped)
        results[setting] = row
    tuned = [s for s, r in results.items() if s != PLAY_SHIPPED and r["difference_ci95_low"] > 0]
    recommended = max(tuned, key=lambda s: results[s]["difference"]) if tuned else PLAY_SHIPPED
    return {"settings": results, "opponents": against, "recommended": recommended}


def _interval(scores: list[float]) -> dict[str, float]:
    return {k: v for k, v in figure({"": scores}).items() if k != "score"}


def _difference(scores: dict[str, list[float]], shipped: dict[str, list[float]]) -> dict[str, float]:
    """The setting's mean score less the shipped setting's, paired game by game (the same deals and seat
    orders) over the opponents, with a normal 95% interval."""
    per_opponent = []
    for opponent, mine in scores.items():
        theirs = shipped[opponent]
        n = min(len(mine), len(theirs))
        per_opponent.append(np.asarray(mine[:n]) - np.asarray(theirs[:n]))
    n = min(len(d) for d in per_opponent)
    per_game = np.mean([d[:n] for d in per_opponent], axis=0)
    mean = float(per_game.mean())
    half = 1.96 * float(per_game.std(ddof=1)) / math.sqrt(n) if n > 1 else float("nan")
    return {"difference": mean, "difference_ci95_low": mean - half, "difference_ci95_high": mean + half}


def metrics(figures: dict) -> dict[str, float]:
    """The confirmation's headline for the study's MLflow parent: the recommended setting's score and
    its difference from the shipped one (every setting's row is in the report's JSON, an artifact of the
    same run, where one-time figures belong rather than in charts of one point each)."""
    row = figures["settings"][figures["recommended"]]
    keys = ("score", "ci95_low", "ci95_high", "difference", "difference_ci95_low")
    return {f"confirmed_{key}": row[key] for key in keys if key in row}
