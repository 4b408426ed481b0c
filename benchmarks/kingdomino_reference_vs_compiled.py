"""The pure-Python reference Kingdomino against the compiled one (`CompiledKingdomino`, numba kernels) on
the same positions in one process: microseconds a greedy playout to the game's end (the reference's
`greedy_playout`; the compiled game's `greedy_outcomes` one position at a time and all in one batch),
and microseconds a position to encode the input planes, 64 a batch. The positions: every `--every`th
position of `--games` greedy games. Compiled code is loaded by one untimed call before timing.

Cited by docs/results/kingdomino-compiled.md (issue 51: a playout of the reference 1,000-1,100 us, 21-23x
the compiled one's). Written as measure51/reference_vs_compiled.py of studies/kd4-play.tar.gz, made to
run from a clone with arguments for what it had fixed.

Usage: python benchmarks/kingdomino_reference_vs_compiled.py [--players 4] [--fit 1] [--games 10] [--every 3]"""

import argparse
import json
import time

import numpy as np

from pipeline.games.kingdomino.compiled import CompiledKingdomino
from pipeline.games.kingdomino.rules import KingdominoGame
from pipeline.search.playouts import greedy_playout


def greedy_positions(game, games: int, every: int) -> list:
    rng, states = np.random.default_rng(0), []
    for _ in range(games):
        state = game.initial_state(rng)
        while not state.done:
            states.append(state)
            state, _ = game.step(state, game.greedy_action(state), rng)
    return states[::every]


def per_state_us(seconds: float, states: list) -> float:
    return round(seconds / len(states) * 1e6, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--fit", type=int, default=1, help="the greedy player's reckoning as planes (0/1)")
    parser.add_argument("--games", type=int, default=10, help="greedy games the positions come from")
    parser.add_argument("--every", type=int, default=3, help="keep every n-th position")
    args = parser.parse_args()
    reference = KingdominoGame(args.players, fit=args.fit)
    compiled = CompiledKingdomino(args.players, fit=args.fit)
    rng = np.random.default_rng(0)
    states = greedy_positions(reference, args.games, args.every)
    compiled.greedy_outcomes(states[:2], [rng] * 2)  # loads the compiled code, untimed
    compiled.encode_batch(states[:2])
    compiled.greedy_action(states[0])

    started = time.perf_counter()
    for state in states:
        greedy_playout(reference, state, rng)
    reference_s = time.perf_counter() - started
    started = time.perf_counter()
    for state in states:
        compiled.greedy_outcomes([state], [rng])
    one_by_one_s = time.perf_counter() - started
    started = time.perf_counter()  # the kingdoms now cached, as search meets them (it encodes a leaf first)
    compiled.greedy_outcomes(states, [rng] * len(states))
    batched_s = time.perf_counter() - started

    encode_s = []
    for game in (reference, compiled):
        started = time.perf_counter()
        for i in range(0, len(states), 64):
            game.encode_batch(states[i : i + 64])
        encode_s.append(time.perf_counter() - started)

    figures = {
        "positions": len(states),
        "reference_us_a_playout": per_state_us(reference_s, states),
        "compiled_us_a_playout_one_by_one": per_state_us(one_by_one_s, states),
        "compiled_us_a_playout_batched": per_state_us(batched_s, states),
        "reference_us_to_encode": per_state_us(encode_s[0], states),
        "compiled_us_to_encode": per_state_us(encode_s[1], states),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
