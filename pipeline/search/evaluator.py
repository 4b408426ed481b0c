"""The seam between search and whatever judges a leaf: the network, random rollouts, a test double."""

from __future__ import annotations

import random
from typing import Any, Protocol

import numpy as np

from pipeline.games.base import rotate_to_mover


class Evaluator(Protocol):
    def evaluate(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Return policy logits (B, actions) and value vectors (B, players) with index 0 the mover."""


class RolloutEvaluator:
    """Classic MCTS's leaf judgement: one uniformly random playout to the end.

    Priors are random logits, so UCB1 tries unvisited moves in a random order, as UCT does.
    """

    def __init__(self, game, seed: int):
        self.game = game
        self.random = random.Random(seed)

    def evaluate(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        logits = np.array(
            [[self.random.random() for _ in range(self.game.num_actions)] for _ in states], dtype=np.float32
        )
        values = np.stack(
            [rotate_to_mover(self.game.random_playout(s, self.random), self.game.to_play(s)) for s in states]
        )
        return logits, values


class UniformEvaluator:
    """Uniform priors and zero values: search driven only by terminal outcomes (tests, baselines)."""

    def __init__(self, game):
        self.game = game

    def evaluate(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        n = len(states)
        return (
            np.zeros((n, self.game.num_actions), dtype=np.float32),
            np.zeros((n, self.game.num_players), dtype=np.float32),
        )


class CachingEvaluator:
    """Remembers a deterministic evaluator's answers by position, so transpositions within and
    across games cost no network call. Never wrap a random evaluator (rollouts) in it."""

    def __init__(self, evaluator: Evaluator, size: int = 200_000):
        self.evaluator = evaluator
        self.size = size
        self.cache: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        self.hits = 0

    def evaluate(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        # Each state is hashed as few times as can be: a position's hash (a tuple's, not cached by Python)
        # was more than a tenth of Kingdomino's search time with the network's cost taken away.
        answers = [self.cache.get(state) for state in states]
        fresh: dict[Any, int] = {}  # each state not in the cache: its row in the evaluator's answer
        rows = [fresh.setdefault(s, len(fresh)) if answer is None else -1 for s, answer in zip(states, answers)]
        if fresh:
            logits, values = self.evaluator.evaluate(list(fresh))
            if len(self.cache) + len(fresh) > self.size:
                self.cache.clear()
            logits.flags.writeable = values.flags.writeable = False  # the cache holds views of their rows
            for state, logit, value in zip(fresh, logits, values):
                self.cache[state] = (logit, value)
            if len(fresh) == len(states):  # every state new and distinct: the answer as it came
                return logits, values
            answers = [(logits[row], values[row]) if row >= 0 else a for a, row in zip(answers, rows)]
        self.hits += len(states) - len(fresh)
        return np.array([answer[0] for answer in answers]), np.array([answer[1] for answer in answers])
