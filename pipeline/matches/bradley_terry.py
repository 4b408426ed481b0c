"""Bradley-Terry ratings on the Elo scale from pairwise results, with 95% confidence intervals.

Every game, of any number of players, is read as one result per pair of seats held by different
agents (the higher score wins, equal scores are half a win each), so generations and baselines of
2-player and N-player games share one rating scale. The fit is the maximum of the Bradley-Terry
likelihood plus one virtual draw per player against a fixed player of rating 0: without it an
undefeated player's rating runs off to infinity and the Newton step never settles. With hundreds of
games per pair the virtual draw moves a rating by well under one Elo point.

Intervals come from the inverse of the observed Fisher information (the Laplace approximation):
exact to compute, instant and deterministic, where a bootstrap would refit hundreds of times and, on
small samples, keep resampling undefeated runs. Pairs from one N-player game are counted as
independent results, so for more than two players the intervals are somewhat too narrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ELO = 400 / math.log(10)  # Elo points per unit of natural log strength
Z95 = 1.959964
PRIOR_DRAWS = 1.0


class RatingsError(ValueError):
    """The results cannot rate these players (nothing to fit, an unknown anchor, separate groups)."""


@dataclass
class Rating:
    rating: float  # Elo scale, relative to the anchor (or to the mean of all players)
    ci_low: float
    ci_high: float
    games: int  # pairwise results the player took part in: for N players, one per pair of seats


def pairwise_results(records) -> list[tuple[str, str, float]]:
    """(a, b, score of a) per game and pair of seats held by different agents: 1, 0.5 on equal
    scores, 0. Records are anything with `seating` (agent name per seat) and `scores` (per seat)."""
    results = []
    for record in records:
        seating, scores = record.seating, record.scores
        if scores is None or len(scores) != len(seating):
            raise RatingsError(f"ratings: a game of {seating} has no score per seat ({scores})")
        for i in range(len(seating)):
            for j in range(i + 1, len(seating)):
                if seating[i] != seating[j]:
                    results.append((seating[i], seating[j], 0.5 + 0.5 * float(np.sign(scores[i] - scores[j]))))
    return results


def fit_bradley_terry(results, anchor: str | None = None) -> dict[str, Rating]:
    """Ratings of every player in `results` ((a, b, score of a) triples), in order of first appearance;
    `anchor` is rated 0 (its interval is then [0, 0] and the others' are relative to it), else the mean
    rating is 0."""
    names = list(dict.fromkeys(name for a, b, _ in results for name in (a, b)))
    if not names:
        raise RatingsError("ratings: no pairwise results to fit")
    if anchor is not None and anchor not in names:
        raise RatingsError(f"ratings: anchor {anchor!r} played no rated game (players: {', '.join(names)})")
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    wins = np.zeros((n, n))  # wins[i, j]: points i took from j
    played = np.zeros((n, n))
    for a, b, score in results:
        if not 0 <= score <= 1 or a == b:
            raise RatingsError(f"ratings: bad result ({a!r}, {b!r}, {score}): needs two players and a score in [0, 1]")
        i, j = index[a], index[b]
        wins[i, j] += score
        wins[j, i] += 1 - score
        played[i, j] += 1
        played[j, i] += 1
    _require_connected(names, played)
    theta = _maximise(wins, played)
    covariance = np.linalg.inv(-_hessian(theta, played))
    origin = np.full(n, 1 / n) if anchor is None else np.eye(n)[index[anchor]]  # weights of the zero point
    shift = np.eye(n) - np.outer(np.ones(n), origin)
    centred, covariance = shift @ theta * ELO, shift @ covariance @ shift.T * ELO**2
    half = Z95 * np.sqrt(np.clip(np.diag(covariance), 0, None))
    games = played.sum(axis=1)
    return {
        name: Rating(float(centred[i]), float(centred[i] - half[i]), float(centred[i] + half[i]), int(games[i]))
        for i, name in enumerate(names)
    }


def _require_connected(names: list[str], played: np.ndarray) -> None:
    """Ratings of players who never met, even indirectly, would say only what the prior says."""
    reached, frontier = {0}, [0]
    while frontier:
        for j in np.flatnonzero(played[frontier.pop()]):
            if int(j) not in reached:
                reached.add(int(j))
                frontier.append(int(j))
    if len(reached) < len(names):
        inside = ", ".join(names[i] for i in sorted(reached))
        outside = ", ".join(names[i] for i in range(len(names)) if i not in reached)
        raise RatingsError(f"ratings: players {{{outside}}} never met {{{inside}}}, directly or through others")


def _log_posterior(theta: np.ndarray, wins: np.ndarray) -> float:
    likelihood = -(wins * np.logaddexp(0, theta[None, :] - theta[:, None])).sum()
    prior = -(np.logaddexp(0, -theta) + np.logaddexp(0, theta)).sum() / 2
    return likelihood + PRIOR_DRAWS * prior


def _hessian(theta: np.ndarray, played: np.ndarray) -> np.ndarray:
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    off = played * p * (1 - p)
    prior = PRIOR_DRAWS / (2 + 2 * np.cosh(theta))  # sigma(t) * (1 - sigma(t)) of the virtual draws
    return off - np.diag(off.sum(axis=1) + prior)


def _maximise(wins: np.ndarray, played: np.ndarray) -> np.ndarray:
    """Newton's method with step halving on the strictly concave log posterior (natural log scale)."""
    theta = np.zeros(len(wins))
    value = _log_posterior(theta, wins)
    for _ in range(200):
        p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
        gradient = (wins - played * p).sum(axis=1) + PRIOR_DRAWS * (0.5 - 1 / (1 + np.exp(-theta)))
        step = np.linalg.solve(_hessian(theta, played), -gradient)
        while True:
            trial = theta + step
            trial_value = _log_posterior(trial, wins)
            if trial_value >= value or np.abs(step).max() < 1e-12:
                break
            step /= 2
        theta, value = trial, trial_value
        if np.abs(step).max() < 1e-10:
            return theta
    raise RatingsError("ratings: the Bradley-Terry fit did not converge in 200 Newton steps")
