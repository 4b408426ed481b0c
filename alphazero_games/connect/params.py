"""Connect-4's sections of `params.evaluate` (pyproject.toml's `alphazero_pipeline.sections`): the
alpha-beta table, games against the solver and Pons' benchmark."""

from __future__ import annotations

from pydantic import Field

from pipeline.config import Games, Int, Section, Simulations


class AlphaBetaParams(Section):
    """Connect-4, Parikh & Wu's appendix table: champion at each budget against alpha-beta at each depth."""

    enabled: bool = True
    simulations: list[Simulations] = Field(default_factory=lambda: [10, 50, 100, 250, 500, 1000], min_length=1)
    depths: list[Int] = Field(default_factory=lambda: [1, 2, 3, 4, 5, 6, 7], min_length=1)
    games_per_side: Games = Field(10, ge=1)


class SolverGamesParams(Section):
    """Connect-4, Parikh & Wu fig. 5: games against the perfect solver, moves until the champion loses."""

    enabled: bool = True
    simulations: list[Simulations] = Field(default_factory=lambda: [100], min_length=1)
    games_per_side: Games = Field(5, ge=1)


class BenchmarkParams(Section):
    """Connect-4: share of mistakes on the standard test positions, raw policy (0) and search budgets."""

    enabled: bool = True
    simulations: list[Simulations] = Field(default_factory=lambda: [0, 100], min_length=1)
    positions_per_set: Int = Field(100, ge=1)
    data_dir: str | None = Field(None, description="folder of test sets; None = Pons' sets shipped in the package")
    files: list[str] = Field(default_factory=list, description="files in data_dir or paths; [] = the default sets")
    every_generation: bool = Field(True, description="score every generation's best network: the strength curve")
