"""The first probe of greedy playouts at the leaves, outside the search's code: `python -m pipeline match`
with every network player's evaluator wrapped so that each leaf's value is (1 - MIX) v + MIX z, v the
network's and z the outcome of one greedy playout to the game's end (every seat by the greedy player),
AlphaGo's mix. The playouts draw from a stream of their own, so its games differ from the pipeline's
`search.greedy_playout_weight`, which does the same inside search and replaced this probe.

The wrapper patches the players built in this process: the params must play the match in it
(`workers: 1`); worker processes would build unwrapped players. Refused otherwise.

Cited by docs/results/kingdomino-playouts.md (the taught 2-player network at 50 simulations against
greedy, seed 0: 0.775 at MIX 0.5, 0.900 at MIX 1). Written as kd-mix/mix_match.py of the Kingdomino
archive of issue 36 (studies/README.md: git history only), with MIX an argument instead of the
environment's.

Usage: python benchmarks/kingdomino_mix_match.py --mix 0.5 CKPT greedy --params PARAMS [match's arguments]"""

import argparse
import sys

import numpy as np

from pipeline.agents.spec import AgentSpec
from pipeline.commands.match import main as match
from pipeline.config import load_params
from pipeline.games.base import rotate_to_mover


class Mixed:
    """An evaluator whose values are mixed with one greedy playout's outcome, from the mover's seat."""

    def __init__(self, inner, game, end_value, weight: float, seed):
        self.inner, self.game, self.end_value, self.weight = inner, game, end_value, weight
        self.rng = np.random.default_rng(seed)

    def evaluate(self, states):
        logits, values = self.inner.evaluate(states)
        mixed = np.array(values, dtype=np.float64)
        for i, state in enumerate(states):
            end = state
            while not self.game.is_terminal(end):
                end, _ = self.game.step(end, self.game.greedy_action(end), self.rng)
            outcome = rotate_to_mover(self.end_value(end), self.game.to_play(state))
            mixed[i] = (1 - self.weight) * mixed[i] + self.weight * outcome
        return logits, mixed


def wrap_players(weight: float) -> None:
    """Every AlphaZero player built from now on in this process searches with `Mixed` leaves."""
    original = AgentSpec._player

    def player(self, game, stream):
        agent = original(self, game, stream)
        if self.kind == "alphazero" and weight > 0:
            search = agent.search
            end_value = self.search.end_value(game)
            search.evaluator = Mixed(search.evaluator, game, end_value, weight, [self.seed, stream])
        return agent

    AgentSpec._player = player


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mix", type=float, required=True, help="the playout's weight in a leaf's value, 0-1")
    parser.add_argument("--params", required=True, help="match's --params; its `workers` must be 1")
    args, rest = parser.parse_known_args()
    if not 0 <= args.mix <= 1:
        sys.exit("error: --mix: a weight from 0 to 1")
    if load_params(args.params).workers != 1:
        sys.exit(f"error: {args.params}: workers must be 1, so that the match's players are built in this process")
    wrap_players(args.mix)
    match([*rest, "--params", args.params])


if __name__ == "__main__":
    main()
