"""The compiled Kingdomino against the pure-Python reference over many games: every variant, games whose
moves are greedy or random half and half, and at every position the same legal moves, greedy choice
and planes; every fifth position a greedy playout to the same end; at every end the same scores and
margins. tests/test_kingdomino_compiled.py does the same over a few games; this is its large budget.
Prints one JSON line per variant: games, positions and playouts checked, mismatches (0 expected).

Usage: python benchmarks/kingdomino_compiled_check.py [--games 500] [--workers 0 (one per core)]"""

import argparse
import json
import os
import random
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from pipeline.games.kingdomino.compiled import CompiledKingdomino
from pipeline.games.kingdomino.rules import KingdominoGame
from pipeline.search.playouts import greedy_playout

# (players, size, middle, harmony, fit), as the tests' variants
VARIANTS = [(4, 5, 0, 0, 1), (4, 5, 1, 0, 0), (3, 5, 1, 1, 1), (3, 5, 0, 0, 0), (2, 5, 0, 1, 1), (2, 7, 1, 1, 1)]


def check_game(variant: tuple, seed: int) -> dict:
    reference, compiled = KingdominoGame(*variant), CompiledKingdomino(*variant)
    rng, choices = np.random.default_rng(seed), random.Random(seed)
    counts = {"positions": 0, "playouts": 0, "mismatches": 0}
    state = reference.initial_state(rng)
    while not state.done:
        legal = reference.legal_actions(state)
        greedy = reference.greedy_action(state)
        same = (
            compiled.legal_actions(state) == legal
            and compiled.greedy_action(state) == greedy
            and np.array_equal(compiled.encode_batch([state])[0], reference.encode(state))
        )
        if counts["positions"] % 5 == 0:
            end = greedy_playout(reference, state, None)
            scores, margins = compiled.greedy_outcomes([state], [None])
            same &= scores[0].tolist() == reference.scores(end).tolist()
            same &= margins[0].tolist() == reference.margins(end).tolist()
            counts["playouts"] += 1
        counts["positions"] += 1
        counts["mismatches"] += not same
        state, _ = reference.step(state, greedy if choices.random() < 0.5 else choices.choice(legal), rng)
    same = compiled.scores(state).tolist() == reference.scores(state).tolist()
    counts["mismatches"] += not (same and compiled.margins(state).tolist() == reference.margins(state).tolist())
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=500, help="games a variant")
    parser.add_argument("--workers", type=int, default=0, help="processes (0: one per core)")
    args = parser.parse_args()
    with ProcessPoolExecutor(args.workers or os.cpu_count()) as pool:
        for variant in VARIANTS:
            results = list(pool.map(check_game, [variant] * args.games, range(args.games), chunksize=8))
            totals = {key: sum(r[key] for r in results) for key in results[0]}
            name = CompiledKingdomino(*variant).name
            print(json.dumps({"variant": name, "games": args.games, **totals}), flush=True)


if __name__ == "__main__":
    main()
