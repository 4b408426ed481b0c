"""The seam between search and whatever judges a leaf: the network, random rollouts, a test double."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pipeline.games.base import rotate_to_mover


class Evaluator(Protocol):
    def evaluate(self, states: list[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Return policy logits (B, actions) and value vectors (B, players) with index 0 the mover."""


# `encode(indices)`: the planes of the positions at `indices` of the keys (None: of every key), which
# search's compiled expansion encodes only when asked: a cached position is never encoded
Encoder = Callable[[list[int] | None], np.ndarray]


@runtime_checkable
class JudgesPlanes(Protocol):
    """An evaluator that judges positions named by `keys` (equal keys, equal positions; for a cache) and
    encoded by search when asked (`Encoder`)."""

    def judges_planes(self) -> bool: ...

    def evaluate_encoded(self, keys: list[bytes], encode: Encoder) -> tuple[np.ndarray, np.ndarray]: ...


def judges_planes(evaluator) -> bool:
    return isinstance(evaluator, JudgesPlanes) and evaluator.judges_planes()


def reads_constant_vector(evaluator) -> bool:
    """Whether a `JudgesPlanes` evaluator reads the game's constant planes at their first cell only (a
    network whose stem takes them as a vector), so that search need write no more of them
    (`CompiledRules.encode_vectors`); an evaluator says so with a `reads_constant_vector()` of its own."""
    reads = getattr(evaluator, "reads_constant_vector", None)
    return reads is not None and reads()


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
        return self._zeros(len(states))

    def judges_planes(self) -> bool:
        return True

    def evaluate_encoded(self, keys: list[bytes], encode: Encoder) -> tuple[np.ndarray, np.ndarray]:
        return self._zeros(len(keys))

    def _zeros(self, n: int) -> tuple[np.ndarray, np.ndarray]:
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
        return self._answer(states, lambda first: self.evaluator.evaluate([states[i] for i in first]))

    def judges_planes(self) -> bool:
        return judges_planes(self.evaluator)

    def reads_constant_vector(self) -> bool:
        return reads_constant_vector(self.evaluator)

    def evaluate_encoded(self, keys: list[bytes], encode: Encoder) -> tuple[np.ndarray, np.ndarray]:
        """Positions named by `keys` (their rows' bytes: never equal to a state, so both kinds share the
        cache); only the new ones are encoded, and go to the evaluator once."""

        def judge(first: list[int]) -> tuple[np.ndarray, np.ndarray]:
            if len(first) == len(keys):
                return self.evaluator.evaluate_encoded(keys, encode)
            fresh = [keys[i] for i in first]
            return self.evaluator.evaluate_encoded(
                fresh, lambda at: encode(first if at is None else [first[i] for i in at])
            )

        return self._answer(keys, judge)

    def _answer(self, keys: list[Hashable], judge: Callable[[list[int]], tuple]) -> tuple[np.ndarray, np.ndarray]:
        """The cache's answer for each key, `judge(first)` asked for the positions not in it (`first`:
        the index of each one's first appearance in `keys`)."""
        # Each key is hashed as few times as can be: a position's hash (a tuple's, not cached by Python)
        # was more than a tenth of Kingdomino's search time with the network's cost taken away.
        answers = [self.cache.get(key) for key in keys]
        fresh: dict[Any, int] = {}  # each key not in the cache: its row in the evaluator's answer
        first: list[int] = []  # where each of them first appears in `keys`
        rows = []
        for i, (key, answer) in enumerate(zip(keys, answers)):
            row = -1
            if answer is None:
                row = fresh.setdefault(key, len(first))
                if row == len(first):
                    first.append(i)
            rows.append(row)
        if fresh:
            logits, values = judge(first)
            if len(self.cache) + len(fresh) > self.size:
                self.cache.clear()
            logits.flags.writeable = values.flags.writeable = False  # the cache holds views of their rows
            for key, logit, value in zip(fresh, logits, values):
                self.cache[key] = (logit, value)
            if len(fresh) == len(keys):  # every key new and distinct: the answer as it came
                return logits, values
            answers = [(logits[row], values[row]) if row >= 0 else a for a, row in zip(answers, rows)]
        self.hits += len(keys) - len(fresh)
        return np.array([answer[0] for answer in answers]), np.array([answer[1] for answer in answers])
