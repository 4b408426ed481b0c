"""The Kingdomino anchor's players (Gedda, Lagerkvist and Butler 2018): `greedy`, the game's own
player-greedy move (the placement and pick that most raise one's score), and `mce:N`, flat Monte Carlo
evaluation: every legal move is tried with N playouts in all, shared round-robin, each played to the end
by player-greedy moves for every seat, and the move with the best mean final value for the mover wins.
The paper found MCE with player-greedy playouts the strongest of its players, UCT included.

As a teacher (expert iteration, Anthony et al. 2017) `mce` also gives what it learnt of every move: a
policy target softmax(mean / temperature) over its moves' mean values for the mover, not only the move
it chose, and the chosen move's mean value vector as its root value (`teacher.temperature`,
`teacher.value_weight`).

Any game that offers `greedy_action(state)` gets both; others are refused with one line.
"""

from __future__ import annotations

import time

import numpy as np

from pipeline.agents.base import PositionAgent
from pipeline.config import ValueParams
from pipeline.games.base import PlaysGreedy, offers
from pipeline.search.playouts import playout_values

GAME_SCORES = ValueParams()  # win_loss, not zero-sum: a move's value is the game's own score vector


def _check_greedy(game) -> None:
    if not offers(game, PlaysGreedy):
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
    A move's value is the mover's mean final value (`value`'s scheme; the default is `game.scores`: in
    Kingdomino the rank against every other seat), so a move that wins more often is preferred to one
    that scores more points. With `temperature` > 0 (a teacher) each move comes with its soft policy
    target and its root value, a forced move included; else a forced move is played without playouts."""

    def __init__(
        self,
        game,
        playouts: int,
        name: str = "mce",
        seconds: float = 0.0,
        value: ValueParams = GAME_SCORES,
        temperature: float = 0.0,
    ):
        _check_greedy(game)
        super().__init__(game, name)
        self.playouts, self.seconds, self.value, self.temperature = playouts, seconds, value, temperature
        self.played = 0  # playouts played, for throughput figures (as SearchAgent.simulations)
        self._root_values: dict[int, np.ndarray] = {}

    def appraise(self, state, legal: list[int], rng) -> np.ndarray:
        """Each of the `legal` moves' mean final value vector (absolute seats) over its playouts."""
        totals, counts = np.zeros((len(legal), self.game.num_players)), np.zeros((len(legal), 1))
        deadline, played = time.perf_counter() + self.seconds, 0
        while played < len(legal) or (time.perf_counter() < deadline if self.seconds > 0 else played < self.playouts):
            # a round: one playout for each move in turn (the last round of a fixed budget, the first few),
            # played in one batch
            tried = len(legal) if self.seconds > 0 or played < len(legal) else min(len(legal), self.playouts - played)
            afters = [self.game.step(state, legal[k], rng)[0] for k in range(tried)]
            totals[:tried] += playout_values(self.game, afters, [rng] * tried, self.value)
            counts[:tried] += 1
            played += tried
        self.played += played
        return totals / counts

    def choose(self, state, rng):
        legal = self.game.legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        means = self.appraise(state, legal, rng)
        return int(legal[int(np.argmax(means[:, self.game.to_play(state)]))])

    def act(self, game_ids):
        if self.temperature == 0:
            return super().act(game_ids)
        return [self._taught_move(gid) for gid in game_ids]

    def _taught_move(self, game_id: int) -> tuple[int, np.ndarray]:
        """The best move with the softmax of every move's mean for the mover as its policy target; its
        mean value vector is kept as the root value."""
        state, rng = self._games[game_id]
        legal = self.game.legal_actions(state)
        means = self.appraise(state, legal, rng)
        mover_means = means[:, self.game.to_play(state)]
        best = int(np.argmax(mover_means))
        self._root_values[game_id] = means[best]
        weights = np.exp((mover_means - mover_means[best]) / self.temperature)
        policy = np.zeros(self.game.num_actions, dtype=np.float32)
        policy[legal] = weights / weights.sum()
        return int(legal[best]), policy

    def root_value(self, game_id: int) -> np.ndarray | None:
        """The mean value vector of the move just chosen in that game (read before `observe`); None
        without a temperature."""
        return self._root_values.get(game_id)

    def end(self, game_id):
        super().end(game_id)
        self._root_values.pop(game_id, None)
