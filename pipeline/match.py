"""Head-to-head between two checkpoints: `python -m pipeline.match A.ckpt B.ckpt`.

Both play AlphaZero search with the search params of `params.yaml` over every seating where both sit
at the table; prints A's pairwise score against B (ties half) with a 95% confidence interval.
"""

from __future__ import annotations

import argparse
import json

from pipeline.agents import PlayConfig
from pipeline.arena import mixed_seatings, score_interval
from pipeline.cli import entry_point
from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.parallel import AgentSpec, play_match
from pipeline.selfplay import search_config


@entry_point
def main(argv):
    parser = argparse.ArgumentParser(prog="python -m pipeline.match", description=__doc__.splitlines()[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--games-per-seating", type=int, default=20)
    parser.add_argument("--rollouts", type=int, default=None, help="default: search.rollouts of params.yaml")
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    params = load_params(args.params)
    game = make_game(params.game)
    play = PlayConfig(simulations=args.rollouts or params.search.rollouts, add_noise=True, temperature_moves=2)
    specs = [
        AgentSpec.alphazero("first", load_checkpoint(args.first, game.name), play, search_config(params)),
        AgentSpec.alphazero("second", load_checkpoint(args.second, game.name), play, search_config(params)),
    ]
    seatings = mixed_seatings(game.num_players) * args.games_per_seating
    result = play_match(game.name, specs, seatings, [args.seed, 4], params.selfplay.parallel_games, params.workers)
    print(json.dumps({"first": args.first, "second": args.second, **score_interval(result.records, "first", "second")}))


if __name__ == "__main__":
    main()
