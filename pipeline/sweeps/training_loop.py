"""Generations in one process, without DVC: self-play, the replay window, training, and the trained
network plays the next generation's self-play.

Sweeps run one such loop per trial: a trial is many short generations, and a DVC pipeline per trial
would spend its budget on process start-up and files. There is no gate: every candidate is promoted,
as in AlphaZero (2018), so a trial's compute goes to self-play and training alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.config import Params
from pipeline.jobs.replay import empty_samples, windowed
from pipeline.jobs.selfplay import run_selfplay
from pipeline.nets.senet import SENet, initial_network


@dataclass
class GenerationReport:
    generation: int
    games: int  # this generation's self-play games
    simulations: int  # self-play network evaluations so far
    seconds: float  # wall time of self-play and training so far
    policy_loss: float
    value_loss: float
    games_per_s: float


def games_on_budget(budget: int, spent: int, simulations_per_game: float) -> int:
    """Games that bring the self-play simulations spent up to `budget`, at the last generation's
    simulations a game: the games follow the game length, so every setting spends the same."""
    return max(1, round((budget - spent) / simulations_per_game))


def play_and_train(game, model: SENet, samples: dict, params: Params, generation: int):
    """One generation in place: `model` plays itself, its games join the replay window `samples`, and it
    is trained on the window. Returns the new window and the self-play and training results."""
    from pipeline.jobs.train import train_network  # Lightning: imported by the trainers, not by `init`

    selfplay = run_selfplay(game, model, params, generation, progress=False)
    samples = windowed(samples, selfplay.samples, generation, params.train)
    seed = params.seed + generation
    train = train_network(game, model, samples, params.train, seed, progress=False, device=params.device)
    return samples, selfplay, train


def train_generations(
    game,
    params: Params,
    generations: int,
    on_generation: Callable[[SENet, GenerationReport], None],
    simulations_per_generation: int | None = None,
) -> SENet:
    """Train from scratch for `generations`; `on_generation` sees the network after each generation
    and may raise to stop early (a pruned trial). With `simulations_per_generation`, every generation
    after the first plays as many games as bring the summed simulations to that budget times the
    generations so far (the first plays `selfplay.games`)."""
    model = initial_network(game, params)
    samples = empty_samples(game)
    simulations, seconds, per_game = 0, 0.0, 0.0
    for generation in range(1, generations + 1):
        started = time.perf_counter()
        if simulations_per_generation and generation > 1:
            games = games_on_budget(generation * simulations_per_generation, simulations, per_game)
            params = params.model_copy(update={"selfplay": params.selfplay.model_copy(update={"games": games})})
        samples, selfplay, train = play_and_train(game, model, samples, params, generation)
        per_game = selfplay.simulations / selfplay.games
        simulations += selfplay.simulations
        seconds += time.perf_counter() - started
        report = GenerationReport(
            generation,
            selfplay.games,
            simulations,
            seconds,
            train.policy_loss,
            train.value_loss,
            selfplay.metrics["games_per_s"],
        )
        on_generation(model, report)
    return model
