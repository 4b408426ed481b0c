"""The Kingdomino anchor's players (Gedda, Lagerkvist and Butler 2018): `greedy`, the game's own
player-greedy move (the placement and pick that most raise one's score), and `mce:N`, flat Monte Carlo
evaluation: every legal move is tried with N playouts in all, shared round-robin, each played to the end
by player-greedy moves for every seat, and the move with the best mean final value for the mover wins.
The paper found MCE with player-greedy playouts the strongest of its players, UCT included.

Any game that offers `greedy_action(state)` gets both; others are refused with one line.
"""

from __future__ import annotations

import time

import numpy as np

from pipeline.agents.base import PositionAgent
from pipeline.games.base import PlaysGreedy
from pipeline.search.playouts import greedy_outcomes


def _check_greedy(game) -> None:
    if not isinstance(game, PlaysGreedy):
        raise ValueError(f"game {game.name!r} has no player-greedy policy (greedy_action); greedy and mce need one")


class PlayerGreedyAgent(PositionAgent):
    """The game's player-greedy move; no randomness, no search."""

    def __init__(self, game, name: str = "greedy"):
        _check_greedy(game)
        super().__init__(game, name)

    def choose(self, state, rng):
        return int(self.game.greedy_action(state))


class MonteCarloAgent(PositionAgent):
    """Flat Monte Carlo evaluation with player-greedy playouts, `playouts` a move in all, or as many as
    `seconds` allow when it is > 0 (the anchor's players move by time); at least one per legal move.
    A move's value is the mover's mean final value (`game.scores`: rank against every other seat), so
    a move that wins more often is preferred to one that scores more points."""

    def __init__(self, game, playouts: int, name: str = "mce", seconds: float = 0.0):
        _check_greedy(game)
        super().__init__(game, name)
        self.playouts, self.seconds = playouts, seconds
        self.played = 0  # playouts played, for throughput figures (as SearchAgent.simulations)

    def choose(self, state, rng):
        legal = self.game.legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        mover = self.game.to_play(state)
        totals, counts = np.zeros(len(legal)), np.zeros(len(legal))
        deadline, played = time.perf_counter() + self.seconds, 0
        while played < len(legal) or (time.perf_counter() < deadline if self.seconds > 0 else played < self.playouts):
            # a round: one playout for each move in turn (the last round of a fixed budget, the first few),
            # played in one batch
            tried = len(legal) if self.seconds > 0 or played < len(legal) else min(len(legal), self.playouts - played)
            afters = [self.game.step(state, legal[k], rng)[0] for k in range(tried)]
            scores, _ = greedy_outcomes(self.game, afters, [rng] * tried)
            totals[:tried] += scores[:, mover]
            counts[:tried] += 1
            played += tried
        self.played += played
        return int(legal[int(np.argmax(totals / counts))])
