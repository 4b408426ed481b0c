"""Matches spread over worker processes so every core is busy: each worker runs its own batched
games, agents and network copy with `cores // workers` torch threads (never oversubscribed).

Agents cross the process boundary as `AgentSpec`s (a recipe plus network weights); games are split
into contiguous chunks. The same seed, params and worker count give the same games.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm import tqdm

from pipeline.agents import (
    GreedyValueAgent,
    PigPolicyAgent,
    PlayConfig,
    RandomAgent,
    SearchAgent,
    hold_at_rolls,
    optimal_rolls,
    uct_agent,
)
from pipeline.arena import GameRecord, play_games
from pipeline.games import make_game
from pipeline.nets.evaluator import NetworkEvaluator
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.search import CachingEvaluator, SearchConfig


@dataclass
class AgentSpec:
    """How to build one player in any process."""

    name: str
    kind: str  # "alphazero" | "greedy" | "uct" | "random" | "pig_optimal" | "pig_hold"
    play: PlayConfig = field(default_factory=PlayConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    network: tuple[dict, dict] | None = None  # (shape fields, state dict) for "alphazero" and "greedy"
    seed: int = 0
    epsilon: float = 0.0  # random-move probability of "greedy"
    hold_at: int = 20  # turn total at which "pig_hold" holds

    @classmethod
    def alphazero(cls, name: str, model: SENet, play: PlayConfig, search: SearchConfig) -> AgentSpec:
        return cls(name, "alphazero", play, search, _weights(model))

    @classmethod
    def greedy(cls, name: str, model: SENet, epsilon: float, search: SearchConfig) -> AgentSpec:
        return cls(name, "greedy", search=search, network=_weights(model), epsilon=epsilon)

    def build(self, game, stream: int = 0):
        """The agent; `stream` picks an independent random stream for agents with their own
        randomness (UCT rollouts), so each chunk of a match plays the same way in any worker."""
        if self.kind in ("alphazero", "greedy"):
            shape, weights = self.network
            model = SENet(NetworkShape(**shape))
            model.load_state_dict(weights)
            evaluator = CachingEvaluator(NetworkEvaluator(game, model.eval()))
            if self.kind == "greedy":
                return GreedyValueAgent(game, evaluator, self.epsilon, self.name, self.search.end_value(game))
            return SearchAgent(game, evaluator, self.search, self.play, self.name)
        if self.kind == "uct":
            seed = int(np.random.SeedSequence([self.seed, stream]).generate_state(1)[0])
            return uct_agent(game, self.play.simulations, seed, self.search.c_uct, self.name)
        if self.kind == "pig_optimal":
            return PigPolicyAgent(game, optimal_rolls(game.goal), self.name)
        if self.kind == "pig_hold":
            return PigPolicyAgent(game, hold_at_rolls(game.goal, self.hold_at), self.name)
        return RandomAgent(game, self.name)


def _weights(model: SENet) -> tuple[dict, dict]:
    return model.shape.to_dict(), {k: v.detach().cpu() for k, v in model.state_dict().items()}


@dataclass
class MatchResult:
    records: list[GameRecord]
    seconds: float  # wall time, worker start-up included
    playing_seconds: float  # from the first chunk's start to the last chunk's end
    moves: int
    simulations: dict[str, int]  # per agent name

    @property
    def games(self) -> int:
        return len(self.records)


_worker: dict = {}


def _init_worker(game_name: str, specs: list[AgentSpec], threads: int) -> None:
    torch.set_num_threads(threads)
    _worker.update(game=make_game(game_name), specs=specs)


def _play_chunk(seatings: list[list[int]], seed, first_index: int, parallel: int, record: bool):
    """One chunk of a match with agents built afresh, so its games depend on nothing else."""
    started = time.time()  # wall clock: comparable across worker processes
    game = _worker["game"]
    agents = [spec.build(game, stream=first_index) for spec in _worker["specs"]]
    records, stats = play_games(
        game, [[agents[i] for i in seating] for seating in seatings], seed, parallel, record, first_index=first_index
    )
    sims: dict[str, int] = {}
    for agent in agents:
        sims[agent.name] = sims.get(agent.name, 0) + getattr(agent, "simulations", 0)
    return records, stats, sims, (started, time.time())


def worker_count(requested: int) -> int:
    return requested or os.cpu_count() or 1


def play_match(
    game_name: str,
    specs: list[AgentSpec],
    seatings: list[list[int]],
    seed,
    parallel: int,
    workers: int,
    record_policies: bool = False,
    progress: str | None = None,
) -> MatchResult:
    """Play one game per seating (indices into `specs`, one per seat) on `workers` processes
    (0: one per core; 1: in this process). Records come back in seating order."""
    started = time.perf_counter()
    workers = min(worker_count(workers), max(1, len(seatings)))
    threads = max(1, (os.cpu_count() or 1) // workers)
    chunk = max(1, min(parallel, -(-len(seatings) // workers)))
    starts = list(range(0, len(seatings), chunk))
    jobs = [(seatings[s : s + chunk], seed, s, parallel, record_policies) for s in starts]
    bar = tqdm(total=len(seatings), desc=progress, disable=progress is None, leave=False)
    results = []
    if workers == 1:
        previous_threads = torch.get_num_threads()
        _init_worker(game_name, specs, previous_threads)
        for job in jobs:
            results.append(_play_chunk(*job))
            bar.update(len(job[0]))
    else:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            workers, context, initializer=_init_worker, initargs=(game_name, specs, threads)
        ) as pool:
            for result, job in zip(pool.map(_play_chunk, *zip(*jobs)), jobs):
                results.append(result)
                bar.update(len(job[0]))
    bar.close()
    sims: dict[str, int] = {}
    for _, _, chunk_sims, _ in results:
        for name, count in chunk_sims.items():
            sims[name] = sims.get(name, 0) + count
    spans = [span for *_, span in results]
    return MatchResult(
        records=[r for records, *_ in results for r in records],
        seconds=time.perf_counter() - started,
        playing_seconds=max(end for _, end in spans) - min(begin for begin, _ in spans),
        moves=sum(stats.moves for _, stats, *_ in results),
        simulations=sims,
    )
