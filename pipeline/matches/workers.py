"""Matches spread over workers so every core is busy: each worker runs its own batched games, agents
and network copy with `cores // workers` torch threads (never oversubscribed). Workers are processes
of this machine (the default) or Ray tasks on a cluster (`ray_backend.py`).

Agents cross the process boundary as `AgentSpec`s (`pipeline/agents/spec.py`: a recipe plus network
weights); games are split into contiguous chunks. The same seed, params and worker count give the same
games, on either backend.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from pipeline.agents.spec import AgentSpec
from pipeline.matches import BackendError
from pipeline.matches.arena import GameRecord
from pipeline.matches.chunks import init_worker, play_chunk
from pipeline.progress import progress_bar


@dataclass(frozen=True)
class Workers:
    """How many chunks of games run at once (0: one per core, or per CPU of the Ray cluster), and where."""

    count: int = 0
    backend: str = "pool"  # "pool" | "ray"
    ray_address: str | None = None
    device: str = "auto"  # where each worker's network infers: auto | cpu | cuda

    @classmethod
    def from_params(cls, params) -> Workers:
        return cls(params.workers, params.backend.kind, params.backend.ray_address, params.device)


@dataclass
class MatchResult:
    records: list[GameRecord]
    seconds: float  # wall time, worker start-up included
    span: tuple[float, float]  # wall clock (time.time) of the first chunk's start and the last chunk's end
    moves: int
    simulations: dict[str, int]  # per agent name

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def playing_seconds(self) -> float:
        return self.span[1] - self.span[0]


def match_workers(workers: Workers, games: int) -> int:
    """How many chunks run at once for `games` games in all: the workers asked for (0: every core, or
    every CPU of the Ray cluster), at most one per game."""
    if workers.backend == "ray" and workers.count == 0:
        return min(_ray_backend().cluster_cpus(workers.ray_address), max(1, games))
    return min(workers.count or os.cpu_count() or 1, max(1, games))


def _run_chunks(workers: Workers, game_name: str, specs: list[AgentSpec], jobs: list[tuple], count: int):
    """Each chunk's result, in the order of `jobs`."""
    if workers.backend == "ray":
        yield from _ray_backend().run_chunks(workers, game_name, specs, jobs)
    elif count == 1:
        init_worker(game_name, specs, None, workers.device)
        yield from (play_chunk(*job) for job in jobs)
    else:
        threads = max(1, (os.cpu_count() or 1) // count)
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            count, context, initializer=init_worker, initargs=(game_name, specs, threads, workers.device)
        ) as pool:
            yield from pool.map(play_chunk, *zip(*jobs))


def _ray_backend():
    """Ray is an optional extra, imported only when the params ask for it."""
    try:
        from pipeline.matches import ray_backend
    except ImportError:
        raise BackendError("backend.kind: ray needs Ray: pip install -e '.[ray]'") from None
    return ray_backend


def play_match(
    game_name: str,
    specs: list[AgentSpec],
    seatings: list[list[int]],
    seed,
    parallel: int,
    workers: int | Workers,
    record_policies: bool = False,
    progress: str | None = None,
    starts: list | None = None,
) -> MatchResult:
    """Play one game per seating (indices into `specs`, one per seat) on `workers` (a count of
    processes: 0 one per core, 1 this process; or `Workers`), from the initial state or `starts[i]`.
    Records come back in seating order."""
    match = (seatings, seed) if starts is None else (seatings, seed, starts)
    return play_matches(game_name, specs, [match], parallel, workers, record_policies, progress)[0]


def play_matches(
    game_name: str,
    specs: list[AgentSpec],
    matches: list[tuple],
    parallel: int,
    workers: int | Workers,
    record_policies: bool = False,
    progress: str | None = None,
    on_match: Callable[[int, MatchResult], None] | None = None,
) -> list[MatchResult]:
    """Several matches, each (seatings, seed) or (seatings, seed, opening states), on one pool of
    workers. Each match is cut into its own chunks,
    so its games depend only on its seatings, seed and the worker count, never on the other matches;
    `on_match(i, result)` runs as soon as match i is complete (to save it before the rest finish)."""
    started = time.perf_counter()
    workers = workers if isinstance(workers, Workers) else Workers(workers)
    total = sum(len(match[0]) for match in matches)
    count = match_workers(workers, total)
    jobs, owners = [], []  # chunk jobs and the match each belongs to
    for m, (seatings, seed, *openings) in enumerate(matches):
        starts = openings[0] if openings else None
        chunk = max(1, min(parallel, -(-len(seatings) // count)))
        for s in range(0, len(seatings), chunk):
            jobs.append((seatings[s : s + chunk], seed, s, parallel, record_policies, starts and starts[s : s + chunk]))
            owners.append(m)
    bar = progress_bar(total=total, desc=progress, disable=progress is None, leave=False)
    chunks: list[list] = [[] for _ in matches]
    remaining = [owners.count(m) for m in range(len(matches))]
    results: list[MatchResult | None] = [None] * len(matches)

    def collect(chunk_result, job, m) -> None:
        chunks[m].append(chunk_result)
        bar.update(len(job[0]))
        remaining[m] -= 1
        if remaining[m] == 0:
            results[m] = _match_result(chunks[m], started)
            if on_match is not None:
                on_match(m, results[m])

    if jobs:
        for chunk_result, job, m in zip(_run_chunks(workers, game_name, specs, jobs, count), jobs, owners):
            collect(chunk_result, job, m)
    bar.close()
    for m, match in enumerate(matches):
        if not match[0]:
            results[m] = MatchResult([], 0.0, (0.0, 0.0), 0, {})
    return results


def _match_result(chunks: list, started: float) -> MatchResult:
    sims: dict[str, int] = {}
    for _, _, chunk_sims, _ in chunks:
        for name, count in chunk_sims.items():
            sims[name] = sims.get(name, 0) + count
    spans = [span for *_, span in chunks]
    return MatchResult(
        records=[r for records, *_ in chunks for r in records],
        seconds=time.perf_counter() - started,
        span=(min(begin for begin, _ in spans), max(end for _, end in spans)),
        moves=sum(stats.moves for _, stats, *_ in chunks),
        simulations=sims,
    )
