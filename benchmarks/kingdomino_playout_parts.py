"""Where a compiled Kingdomino greedy playout spends its time, part by part, in microseconds a position
(best of three): the whole `greedy_outcomes` on a fresh game object (no kingdom cached) and on a warm
one (every kingdom's int8 row cached, as search meets them when it encodes a leaf); the conversion of
the reference kingdoms into the kernels' rows; the kernel `greedy_playouts` alone; the standings; the
seeds; the same in batches of 64 as search asks; and `benchmarks/kingdomino_speed.py`'s
greedy-playouts-a-second figure on the same positions. The positions: every fourth of `--games`
4-player greedy games (as kingdomino_speed.py takes them).

Cited by docs/results/kingdomino-compiled.md (issue 51: a compiled playout about 40 us in the kernel,
47 us with the kingdoms cached, 57 us without). Written as measure51/playouts_cached.py of
studies/kd4-play.tar.gz, made to run from a clone.

Usage: python benchmarks/kingdomino_playout_parts.py [--games 20]"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from pipeline.games import make_game
from pipeline.games.kingdomino import kernels

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kingdomino_speed  # noqa: E402  (benchmarks/, beside this file)

GAME = "kingdomino(players=4)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="greedy games the positions come from")
    args = parser.parse_args()
    _, positions = kingdomino_speed.greedy_seconds(args.games)
    rng = np.random.default_rng(0)

    def us(work, repeats: int = 3) -> float:
        best = float("inf")
        for _ in range(repeats):
            started = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - started)
        return round(best / len(positions) * 1e6, 1)

    def batched(game, batch: int = 64) -> None:
        for i in range(0, len(positions), batch):
            states = positions[i : i + batch]
            game.greedy_outcomes(states, [rng] * len(states))

    warm = make_game(GAME)
    warm.greedy_outcomes(positions[:1], [rng])  # loads the compiled code, untimed
    figures = {
        "positions": len(positions),
        "mean_plies_left": round(float(np.mean([96 - s.ply for s in positions])), 1),
        "whole_fresh_game_us": us(lambda: make_game(GAME).greedy_outcomes(positions, [rng] * len(positions))),
        "whole_warm_cache_us": us(lambda: warm.greedy_outcomes(positions, [rng] * len(positions))),
    }
    fresh = make_game(GAME)
    started = time.perf_counter()
    [fresh.kingdom_row(k) for state in positions for k in state.kingdoms]
    figures["kingdom_rows_fresh_us"] = round((time.perf_counter() - started) / len(positions) * 1e6, 1)
    figures["arrays_warm_us"] = us(lambda: warm._arrays(positions))

    kingdoms, headers = warm._arrays(positions)
    decks = np.zeros((len(positions), 48), dtype=np.int64)
    for deck, state in zip(decks, positions):
        deck[: len(state.deck)] = state.deck
    seeds = np.arange(len(positions), dtype=np.int64)
    ranks = np.zeros((len(positions), warm.num_players, 3), dtype=np.int64)
    figures["kernel_us"] = us(
        lambda: kernels.greedy_playouts(kingdoms.copy(), headers, decks, seeds, *warm._flags, warm.row_length, ranks)
    )
    figures["standings_us"] = us(lambda: warm.standings(ranks))
    figures["seeds_us"] = us(lambda: [rng.integers(1 << 62) for _ in positions])
    figures["batched_64_fresh_game_us"] = us(lambda: batched(make_game(GAME)))
    figures["batched_64_warm_cache_us"] = us(lambda: batched(warm))
    figures["speed_script_us"] = round(1e6 / kingdomino_speed.playouts_per_s(positions), 1)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
