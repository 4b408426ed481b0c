"""Parikh & Wu's fast data collector ("Alpha Zero at Home"): no search, just one batched network call
over the children of every pending position; move to the child the value head rates best for the
mover, or with probability epsilon to a uniformly random one."""

from __future__ import annotations

import numpy as np

from pipeline.games.base import to_absolute
from pipeline.search.evaluator import Evaluator


class GreedyValueAgent:
    def __init__(self, game, evaluator: Evaluator, epsilon: float, name: str = "greedy", end_value=None):
        self.game = game
        self.end_value = end_value or game.scores  # a finished game's value vector
        self.evaluator = evaluator
        self.epsilon = epsilon
        self.name = name
        self.simulations = 0  # children evaluated, the counterpart of search simulations
        self._games: dict[int, tuple] = {}

    def begin(self, game_id, state, rng):
        self._games[game_id] = (state, rng)

    def act(self, game_ids):
        game = self.game
        options = []  # per game: (legal actions, child values in absolute seats)
        pending, pending_at = [], []
        for gid in game_ids:
            state, rng = self._games[gid]
            legal = game.legal_actions(state)
            values = np.zeros((len(legal), game.num_players))
            for i, action in enumerate(legal):
                child, _ = game.step(state, action, rng)
                if game.is_terminal(child):
                    values[i] = self.end_value(child)
                else:
                    pending.append(child)
                    pending_at.append((len(options), i))
            options.append((legal, values))
        if pending:
            _, relative = self.evaluator.evaluate(pending)
            movers = np.array([game.to_play(s) for s in pending])
            for (row, i), value in zip(pending_at, to_absolute(np.asarray(relative), movers)):
                options[row][1][i] = value
        self.simulations += len(pending)
        moves = []
        for gid, (legal, values) in zip(game_ids, options):
            state, rng = self._games[gid]
            greedy = legal[int(np.argmax(values[:, game.to_play(state)]))]
            action = int(rng.choice(legal)) if rng.random() < self.epsilon else greedy
            policy = np.zeros(game.num_actions, dtype=np.float32)
            policy[greedy] = 1.0  # the policy head learns to mimic the greedy player (Parikh & Wu)
            moves.append((action, policy))
        return moves

    def observe(self, game_id, action, state):
        self._games[game_id] = (state, self._games[game_id][1])

    def end(self, game_id):
        del self._games[game_id]
