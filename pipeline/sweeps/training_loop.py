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
    simulations: int  # self-play network evaluations so far
    seconds: float  # wall time of self-play and training so far
    policy_loss: float
    value_loss: float
    games_per_s: float


def train_generations(
    game, params: Params, generations: int, on_generation: Callable[[SENet, GenerationReport], None]
) -> SENet:
    """Train from scratch for `generations`; `on_generation` sees the network after each generation
    and may raise to stop early (a pruned trial)."""
    from pipeline.jobs.train import train_network  # Lightning: imported by the trainers, not by `init`

    model = initial_network(game, params)
    samples = empty_samples(game)
    simulations, seconds = 0, 0.0
    for generation in range(1, generations + 1):
        started = time.perf_counter()
        selfplay = run_selfplay(game, model, params, generation, progress=False)
        samples = windowed(samples, selfplay.samples, generation, params.train)
        seed = params.seed + generation
        train = train_network(game, model, samples, params.train, seed, progress=False, device=params.device)
        simulations += selfplay.simulations
        seconds += time.perf_counter() - started
        report = GenerationReport(
            generation, simulations, seconds, train.policy_loss, train.value_loss, selfplay.metrics["games_per_s"]
        )
        on_generation(model, report)
    return model
