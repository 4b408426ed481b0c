"""One chunk of a match, as a worker plays it: a process of the pool or a Ray task. Its games depend
only on the chunk's seatings, seed and first game index, so every backend plays the same games."""

from __future__ import annotations

import time

from pipeline.games import make_game
from pipeline.matches.arena import play_games
from pipeline.nets.server import ServerAddress, connect
from pipeline.plumbing.owners import exit_with_parent
from pipeline.plumbing.threads import use_threads

_worker: dict = {}  # this process's game and agent specs, set once per match set


def init_worker(game_name: str, specs: list, threads: int | None, server: ServerAddress | None = None):
    """This process's game, players and threads; with `server`, its networks are the inference server's
    (`nets/server.py`). Where a player's network runs is its spec's (`SearchConfig.device`)."""
    if threads is not None:  # a worker process; in the caller's own process the threads stay as set
        use_threads(threads)
        exit_with_parent()
    connect(server)
    _worker.update(game=make_game(game_name), specs=specs, warm=False)


def play_chunk(seatings: list[list[int]], seed, first_index: int, parallel: int, record: bool, starts):
    """One chunk of a match with agents built afresh, so its games depend on nothing else. A process's
    first chunk warms its players up before its clock starts (`_warm_up`)."""
    _warm_up()
    game = _worker["game"]
    started = time.time()  # wall clock: comparable across worker processes
    agents = [spec.build(game, stream=first_index) for spec in _worker["specs"]]
    tables = [[agents[i] for i in seating] for seating in seatings]
    records, stats = play_games(game, tables, seed, parallel, record, first_index=first_index, starts=starts)
    sims: dict[str, int] = {}
    for agent in agents:
        sims[agent.name] = sims.get(agent.name, 0) + getattr(agent, "simulations", 0)
    return records, stats, sims, (started, time.time())


def _warm_up() -> None:
    """Once a process: each searching player loads its kernels and network (`SearchAgent.warm_up`), so that
    a chunk's span, which self-play's simulations/s divides by, times play, as the network's own rate is
    timed warm (a quarter of a second of a Kingdomino worker's first chunk); a match's wall time still counts it.
    Here, not in `init_worker`, so that a game's fault met on the way is a chunk's error, reported as one."""
    if _worker["warm"]:
        return
    for spec in _worker["specs"]:
        if spec.searches():  # not a player the game brings, whose making may cost (a solver's book)
            spec.build(_worker["game"]).warm_up()
    _worker["warm"] = True
