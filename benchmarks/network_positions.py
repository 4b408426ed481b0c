"""The network alone, positions a second, as `python -m pipeline bench` measures it (its network for the
game, random weights, traced and frozen, the best of three timed loops at one batch), without the rest
of bench: run it several times, alternating checkouts, to see how much the figure moves from one
process to the next on one machine. Torch's threads follow the free cores, as in bench.

Cited by docs/results/kingdomino-compiled.md (issue 51: 5,400-8,500 positions/s from one process to the
next with either checkout, the noise in bench's `search_to_network_ratio`). Written as measure51/net.py
of studies/kd4-play.tar.gz, made to run from a clone with arguments for what it had fixed.

Usage: python benchmarks/network_positions.py [--game 'kingdomino(players=4,fit=1)'] [--batch 64] [--seconds 2]"""

import argparse

from pipeline.commands.bench import GAMES, bench_network, network_positions_per_s
from pipeline.threads import use_threads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--game", default="kingdomino(players=4,fit=1)", choices=list(GAMES), help="one of bench's games"
    )
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=2.0, help="the timed loops' time in all")
    args = parser.parse_args()
    use_threads(0)
    game, model = bench_network(args.game)
    print(type(game).__name__, round(network_positions_per_s(game, model, args.batch, args.seconds)))


if __name__ == "__main__":
    main()
