"""Generation 0 taught by a player that needs no network (`teacher.player`: greedy, mce:N, uct:N,
alphabeta:D): the player's games against itself, its moves as policy targets and each game's outcome
(under the run's value scheme) as value targets, fitted as a generation's window is. `mce` can teach
what it learnt of every move (expert iteration, Anthony et al. 2017): with `teacher.temperature` its
policy targets are a softmax of its moves' mean values, and `teacher.value_weight` mixes its mean value
of the chosen move into the value targets, as self-play mixes a search's root value.

Why: where a cheap heuristic player exists, self-play from random weights spends its first generations
learning what it already knows. Kingdomino's player-greedy plays 2,000 2-player games in 9 s, and a
network fitted on them in minutes scores against greedy what the 2-player run reached after an hour of
self-play (docs/results/kingdomino-teacher.md, "A teacher for generation 0"). Self-play goes on from there as from any
generation 0. The teacher's samples train generation 0 only: the replay buffer starts empty, so the
generations after it learn from search alone."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from pipeline import seeds
from pipeline.agents.names import seated_baseline
from pipeline.agents.spec import AgentSpec
from pipeline.config import ConfigError, Params
from pipeline.jobs.selfplay import alphazero_targets, end_values, records_to_samples
from pipeline.jobs.train import train_network
from pipeline.matches.workers import Workers, play_match
from pipeline.nets.senet import SENet

SIDE_BY_SIDE = 64  # the teacher's games in flight per worker; fixed, so that no other param changes them


def teacher_spec(game, params: Params) -> AgentSpec:
    """The teacher as a player that records its moves; one ConfigError naming `teacher.player` for a name
    the grammar does not know or the game cannot seat."""
    teacher = params.teacher
    try:
        player, spec = seated_baseline(game, teacher.player, "teacher", params.evaluate.c_uct, params.seed)
    except ValueError as err:
        raise ConfigError(f"teacher.player: {err}") from None
    if player.kind != "mce" and teacher.temperature > 0:
        raise ConfigError(f"teacher.temperature: only mce gives soft targets; {teacher.player!r} gives its moves")
    if teacher.value_weight > 0 and teacher.temperature == 0:
        raise ConfigError(
            "teacher.value_weight: the teacher's values come with its soft targets; set teacher.temperature > 0"
        )
    spec.teaching = True
    if teacher.temperature > 0:  # its values are targets: under the run's scheme (its moves then follow them)
        spec.target_temperature = teacher.temperature
        spec.search = spec.search.model_copy(update={"value": params.value})
    return spec


def teacher_samples(game, records: list, params: Params) -> dict:
    """The samples of the teacher's games, `SIDE_BY_SIDE` games at a time: the planes of all of them at
    once in float32 would take 12 GB for 2,000 4-player Kingdomino games."""
    parts = []
    for i in range(0, len(records), SIDE_BY_SIDE):
        chunk = records[i : i + SIDE_BY_SIDE]
        targets = alphazero_targets(chunk, end_values(game, chunk, params), params.teacher.value_weight)
        parts.append(records_to_samples(game, chunk, 0, targets))
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def teach(game, model: SENet, params: Params, progress: bool = True, resume: Path | None = None) -> dict:
    """Fit `model` on the teacher's games; returns the compute spent (self-play simulations, the
    teacher's own if it searches, and wall hours of its games and the fit), where the strength curve
    of a taught run begins. With a `resume` folder the fit is saved there after every epoch and goes on
    from it (the games are seeded, so a stopped stage plays the same ones again)."""
    spec = teacher_spec(game, params)
    started = time.perf_counter()
    games = params.teacher.games
    result = play_match(
        game.name,
        [spec],
        [[0] * game.num_players] * games,
        seeds.teacher_games(params.seed),
        SIDE_BY_SIDE,
        Workers.from_params(params),
        record_policies=True,
        progress=f"teacher {params.teacher.player}" if progress else None,
    )
    samples = teacher_samples(game, result.records, params)
    played = time.perf_counter() - started
    fit = train_network(
        game,
        model,
        samples,
        params.train.model_copy(update={"epochs": params.teacher.epochs}),
        seed=params.seed,
        progress=progress,
        device=params.device,
        resume=resume,
    )
    print(
        f"teacher {params.teacher.player}: {games} games, {fit.samples} positions in {played:.0f} s; fitted in "
        f"{params.teacher.epochs} epochs: policy loss {fit.policy_loss:.4f}, value loss {fit.value_loss:.4f}",
        file=sys.stderr,
    )
    return {"simulations": result.simulations.get(spec.name, 0), "hours": (time.perf_counter() - started) / 3600}
