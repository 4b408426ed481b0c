"""Seconds one process takes to self-play 32 games at once on one thread with the bench's random network,
each run with a fresh player (an empty position cache): the figure to compare two checkouts by, run
alternately on the same machine, since a machine's speed drifts within minutes.

    PYTHONPATH=CHECKOUT python benchmarks/selfplay_batch.py GAME [RUNS]
"""

import sys
import time

from pipeline.agents.recipes import selfplay_player
from pipeline.games import make_game
from pipeline.jobs.throughput import bench_network, selfplay_params
from pipeline.matches.arena import play_games
from pipeline.plumbing.threads import use_threads

GAMES = 32

if __name__ == "__main__":
    name, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    use_threads(1)
    game = make_game(name)
    spec = selfplay_player(bench_network(name)[1], selfplay_params(name, GAMES, GAMES))
    play_games(game, [[spec.build(game)] * game.num_players] * 2, seed=1, parallel=2)  # compile the kernels
    seconds = []
    for _ in range(runs):
        agent = spec.build(game)
        started = time.perf_counter()
        play_games(game, [[agent] * game.num_players] * GAMES, seed=0, parallel=GAMES)
        seconds.append(time.perf_counter() - started)
    print(name, " ".join(f"{s:.3f}" for s in seconds))
