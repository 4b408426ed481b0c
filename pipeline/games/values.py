"""Value schemes: how a finished game's outcome becomes the value vector that search backs up and
the network learns (one entry per seat, in [-1, 1]).

- `win_loss` (Petosa & Balch): the game's score vector, +1 winner, -1 every other seat, 0 all on a draw.
- `pairwise_rank` (the Kingdomino notes): one point per pair of players, to whoever finished ahead, split on a
  tie; a seat's points (0 to n-1) are scaled to [-1, 1]. Sum over seats is always 0.
- `margin` (the Kingdomino notes' suggested improvement), for games that define `margins(state)` and
  `margin_scale`: each pair's point is half rank, half margin (0.5 + 0.5 * clip(gap / scale, -1, 1)),
  so a bigger win is worth more and near-ties are smooth.
`zero_sum` normalises the vector to sum 0 (the Kingdomino notes' "normalise to a fixed sum"): subtract the mean,
then shrink into [-1, 1] if needed, so the tanh value head can still reach it.
"""

from __future__ import annotations

import numpy as np

from pipeline.games.base import margin_scale

SCHEMES = ("win_loss", "pairwise_rank", "margin")


def pairwise_points(scores: np.ndarray) -> np.ndarray:
    """Per seat (last axis), points from every other seat: 1 if ahead, 0.5 if tied, 0 if behind."""
    # a pair's point is (1 + sign(diff)) / 2: the seat's own pair (sign 0) is left out of the sum
    ahead = np.sign(scores[..., :, None] - scores[..., None, :]).sum(axis=-1)
    return 0.5 * ahead + 0.5 * (scores.shape[-1] - 1)


def margin_points(scores: np.ndarray, margins: np.ndarray, scale: float) -> np.ndarray:
    gap = np.clip((margins[..., :, None] - margins[..., None, :]) / scale, -1.0, 1.0)
    diff = scores[..., :, None] - scores[..., None, :]
    rank = np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
    points = 0.5 * rank + 0.5 * (0.5 + 0.5 * gap)
    return points.sum(axis=-1) - 0.5


def outcome_value(
    scores: np.ndarray,
    margins: np.ndarray | None,
    margin_scale: float,
    scheme: str = "win_loss",
    zero_sum: bool = False,
) -> np.ndarray:
    """Value vectors (last axis: seats) of finished games from their score vectors and, for `margin`,
    their margins: what `terminal_value` gives, for many games at once (greedy playouts)."""
    scores = np.asarray(scores, dtype=np.float64)
    seats = scores.shape[-1]
    if scheme == "win_loss":
        value = scores
    elif scheme == "pairwise_rank":
        value = 2.0 * pairwise_points(scores) / (seats - 1) - 1.0
    elif scheme == "margin":
        margins = np.asarray(margins, dtype=np.float64)
        value = 2.0 * margin_points(scores, margins, margin_scale) / (seats - 1) - 1.0
    else:
        raise ValueError(f"unknown value scheme {scheme!r}; expected one of {', '.join(SCHEMES)}")
    if zero_sum:
        value = value - value.mean(axis=-1, keepdims=True)
        value = value / np.maximum(1.0, np.abs(value).max(axis=-1, keepdims=True))
    return value


def terminal_value(game, state, scheme: str = "win_loss", zero_sum: bool = False) -> np.ndarray:
    margins = game.margins(state) if scheme == "margin" else None
    return outcome_value(game.scores(state), margins, margin_scale(game), scheme, zero_sum)
