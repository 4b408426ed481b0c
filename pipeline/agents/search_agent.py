"""Search-based players: AlphaZero (PUCT + network) and classic UCT (UCB1 + random rollouts) are the
same batched search with a different evaluator and selection rule."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.search import BatchedSearch, RolloutEvaluator, SearchConfig, Tree
from pipeline.search.evaluator import Evaluator


@dataclass(frozen=True)
class PlayConfig:
    simulations: int = 50
    add_noise: bool = False  # Dirichlet noise at the root (self-play, gating)
    temperature: float = 1.0
    temperature_moves: int = 0  # plies sampled in proportion to visits^(1/T); argmax after
    reuse_tree: bool = True


class SearchAgent:
    def __init__(self, game, evaluator: Evaluator, search: SearchConfig, play: PlayConfig, name: str):
        self.game = game
        self.name = name
        self.play = play
        self.search = BatchedSearch(game, evaluator, search)
        self.trees: dict[int, Tree] = {}
        self.simulations = 0  # simulations run, for throughput figures

    def begin(self, game_id, state, rng):
        self.trees[game_id] = Tree(self.game, state, rng)

    def act(self, game_ids):
        trees = [self.trees[gid] for gid in game_ids]
        self.search.run(trees, self.play.simulations, add_noise=self.play.add_noise)
        self.simulations += self.play.simulations * len(trees)
        return [self._pick(tree) for tree in trees]

    def _pick(self, tree: Tree) -> tuple[int, np.ndarray]:
        visits = tree.root_visits().astype(np.float64)
        policy = visits / visits.sum()
        if self.game.ply(tree.root_state) < self.play.temperature_moves and self.play.temperature > 0:
            weights = visits ** (1.0 / self.play.temperature)
            action = int(tree.rng.choice(len(weights), p=weights / weights.sum()))
        else:
            action = int(np.argmax(visits))
        return action, policy.astype(np.float32)

    def observe(self, game_id, action, state):
        tree = self.trees[game_id]
        if not (self.play.reuse_tree and tree.advance(action, state)):
            self.trees[game_id] = Tree(self.game, state, tree.rng)

    def end(self, game_id):
        del self.trees[game_id]


def uct_agent(game, simulations: int, seed: int, c_uct: float = 1.41, name: str | None = None) -> SearchAgent:
    """Classic MCTS (seed 003): UCB1 selection, one random rollout per new node."""
    return SearchAgent(
        game,
        RolloutEvaluator(game, seed),
        SearchConfig(selection="ucb1", c_uct=c_uct),
        PlayConfig(simulations=simulations),
        name or f"uct{simulations}",
    )
