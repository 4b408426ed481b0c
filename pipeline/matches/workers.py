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
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from pipeline.agents.spec import AgentSpec
from pipeline.games import make_game
from pipeline.matches import BackendError
from pipeline.matches.arena import GameRecord
from pipeline.matches.chunks import init_worker, play_chunk
from pipeline.nets.server import serving
from pipeline.plumbing.handover import handed_over
from pipeline.plumbing.progress import progress_bar

PROCESSES_PER_SERVED_CORE = 2  # while one waits for the server's answer, the other searches
MAX_POOL_STARTS = 4  # a pool broken by a dead worker is started again, this often in all


@dataclass(frozen=True)
class Workers:
    """How many chunks of games run at once (0: one per core, or per CPU of the Ray cluster), and where."""

    count: int = 0
    backend: str = "pool"  # "pool" | "ray"
    ray_address: str | None = None
    device: str = "auto"  # where each worker's network infers: auto | cpu | cuda
    inference_server: str = "auto"  # on | off | auto: on where the network runs on a GPU (`nets/server.py`)

    @classmethod
    def from_params(cls, params) -> Workers:
        backend = params.backend
        return cls(params.workers, backend.kind, backend.ray_address, params.device, backend.inference_server)

    def served(self) -> bool:
        """Whether a pool's workers send their positions to one inference server (on Ray: one a node,
        `ray_backend.py`)."""
        if self.backend != "pool" or self.inference_server == "off":
            return False
        if self.inference_server == "on" or self.device == "cuda":
            return True
        import torch

        return self.device == "auto" and torch.cuda.is_available()


@dataclass
class MatchResult:
    records: list[GameRecord]
    seconds: float  # wall time, worker start-up included
    span: tuple[float, float]  # wall clock (time.time) of the first chunk's start and the last chunk's end
    moves: int
    simulations: dict[str, int]  # per agent name
    served: dict[str, float] = field(default_factory=dict)  # the inference server's figures, chunks retried

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def playing_seconds(self) -> float:
        return self.span[1] - self.span[0]


def match_workers(workers: Workers, games: int) -> int:
    """How many chunks run at once for `games` games in all: the workers asked for (0: every core, two
    a core where an inference server evaluates, or every CPU of the Ray cluster), at most one per game."""
    if workers.backend == "ray" and workers.count == 0:
        return min(_ray_backend().cluster_cpus(workers.ray_address), max(1, games))
    if workers.count:
        return min(workers.count, max(1, games))
    per_core = PROCESSES_PER_SERVED_CORE if workers.served() else 1
    return min(per_core * (os.cpu_count() or 1), max(1, games))


def chunk_games(games: int, parallel: int, count: int) -> int:
    """The games a chunk holds: `games` spread over the `count` chunks that run at once, at most
    `parallel` each (a chunk plays its games side by side, so this is its search's batch a step)."""
    return max(1, min(parallel, -(-games // count)))


def _run_chunks(workers: Workers, game_name: str, specs: list[AgentSpec], jobs: list[tuple], count: int, served: dict):
    """Each chunk's result, in the order of `jobs`; the inference server's figures into `served`."""
    if workers.backend == "ray":
        yield from _ray_backend().run_chunks(workers, game_name, specs, jobs, served)
    elif count == 1:
        init_worker(game_name, specs, None)
        yield from (play_chunk(*job) for job in jobs)
    else:
        networks = [spec.served() for spec in specs if spec.network]
        if not (workers.served() and networks):
            threads = max(1, (os.cpu_count() or 1) // count)
            game = make_game(game_name)
            yield from _pool_chunks(count, (game_name, [spec.for_pool(game) for spec in specs], threads), jobs, served)
            return
        with serving(game_name, networks, workers.device, served) as server:
            init = (game_name, specs, 1, server.address)  # one torch thread: its networks are the server's
            yield from _pool_chunks(count, init, jobs, served, server.check_alive)


def _pool_chunks(count: int, init: tuple, jobs: list[tuple], served: dict, check=lambda: None):
    """Each job's result in order, from `count` worker processes. A worker that dies (the
    out-of-memory killer, a kill) breaks the pool: the chunks it and the others had in flight are
    played again on a fresh pool, the same games, since a chunk depends on nothing else; finished
    chunks are kept. `served["retried_chunks"]` counts them. `check` raises where retrying cannot help
    (the inference server died)."""
    finished: set[int] = set()
    waiting: dict[int, tuple] = {}  # finished, not yet yielded: an earlier chunk is still to come
    yielded = 0
    with handed_over(init_worker, init) as (initializer, initargs):  # so that the workers start at once
        for _ in range(MAX_POOL_STARTS):
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(count, context, initializer=initializer, initargs=initargs) as pool:
                futures = {i: pool.submit(play_chunk, *job) for i, job in enumerate(jobs) if i not in finished}
                try:
                    for i, future in futures.items():
                        waiting[i] = future.result()
                        finished.add(i)
                        while yielded in waiting:
                            yield waiting.pop(yielded)
                            yielded += 1
                    return
                except BrokenProcessPool:  # every future is done now: finished, or broken with the pool
                    check()
                    kept = {i: f.result() for i, f in futures.items() if i not in finished and not f.exception()}
                    waiting.update(kept)
                    finished.update(kept)
                    served["retried_chunks"] = served.get("retried_chunks", 0) + len(jobs) - len(finished)
                except BaseException:  # SIGTERM, Ctrl-C, a caller that stopped reading: wait for no running chunk
                    _stop_workers(pool)
                    raise
    raise BackendError(f"workers: a worker process died {MAX_POOL_STARTS} times in one match (out of memory?)")


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """The pool's workers killed and its queue dropped, so that leaving its `with` waits for no chunk in
    play: a timed match's chunk can run for many minutes, and SIGTERM would wait for all of them."""
    for process in list(getattr(pool, "_processes", {}).values()):  # no public way before Python 3.14
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


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
        chunk = chunk_games(len(seatings), parallel, count)
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

    served: dict[str, float] = {}
    if jobs:
        for chunk_result, job, m in zip(_run_chunks(workers, game_name, specs, jobs, count, served), jobs, owners):
            collect(chunk_result, job, m)
    bar.close()
    for result in results:
        if result is not None:
            result.served = served  # filled when the last chunk is in: the same figures for every match
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
