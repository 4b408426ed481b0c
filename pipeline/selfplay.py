"""Self-play: the current best network plays itself with noise and a temperature schedule; every
searched position becomes a training sample (planes, visit distribution, outcome seen by the mover)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.agents import PlayConfig
from pipeline.arena import GameRecord
from pipeline.config import Params
from pipeline.games.base import rotate_to_mover
from pipeline.nets.senet import SENet
from pipeline.parallel import AgentSpec, play_match
from pipeline.search import SearchConfig


def search_config(params: Params) -> SearchConfig:
    s = params.search
    return SearchConfig(c_puct=s.c_puct, dirichlet_alpha=s.dirichlet_alpha, dirichlet_epsilon=s.dirichlet_epsilon)


@dataclass
class SelfPlayResult:
    samples: dict[str, np.ndarray]
    games: int
    seconds: float
    simulations: int
    mean_length: float

    @property
    def metrics(self) -> dict[str, float]:
        return {
            "games": self.games,
            "samples": len(self.samples["values"]),
            "games_per_s": self.games / self.seconds,
            "simulations_per_s": self.simulations / self.seconds,
            "mean_game_length": self.mean_length,
            "seconds": self.seconds,
        }


def records_to_samples(game, records: list[GameRecord], generation: int) -> dict[str, np.ndarray]:
    states = [s for r in records for s in r.states]
    values = [rotate_to_mover(r.scores, m) for r in records for m in r.policy_movers]
    return {
        "states": game.encode_batch(states).astype(np.uint8),
        "policies": np.stack([p for r in records for p in r.policies]).astype(np.float32),
        "values": np.stack(values).astype(np.float32),
        "generations": np.full(len(states), generation, dtype=np.int32),
    }


def run_selfplay(game, model: SENet, params: Params, generation: int, progress: bool = True) -> SelfPlayResult:
    sp = params.selfplay
    play = PlayConfig(
        simulations=params.search.rollouts,
        add_noise=True,
        temperature=sp.temperature,
        temperature_moves=sp.temperature_moves,
        reuse_tree=sp.reuse_tree,
    )
    result = play_match(
        game.name,
        [AgentSpec.alphazero("selfplay", model, play, search_config(params))],
        [[0] * game.num_players] * sp.games,
        seed=[params.seed, generation, 1],
        parallel=sp.parallel_games,
        workers=params.workers,
        record_policies=True,
        progress=f"self-play gen {generation}" if progress else None,
    )
    return SelfPlayResult(
        samples=records_to_samples(game, result.records, generation),
        games=result.games,
        seconds=result.seconds,
        simulations=result.simulations["selfplay"],
        mean_length=result.moves / result.games,
    )
