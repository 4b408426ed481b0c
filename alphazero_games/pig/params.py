"""Pig's section of `params.evaluate` (pyproject.toml's `alphazero_pipeline.sections`): its oracle."""

from __future__ import annotations

from pydantic import Field

from pipeline.config import Games, Int, Section


class PigOracleParams(Section):
    """Two-player Pig: the champion against the optimal policy and against 'hold at N'."""

    enabled: bool = True
    games_per_seat: Games = Field(500, ge=1)
    hold_at: Int = Field(20, ge=1)
