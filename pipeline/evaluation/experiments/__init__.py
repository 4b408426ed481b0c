"""The evaluation's experiments, one module each (the interface is `base.py`), in the order they are
planned, summarised and reported; and `Evaluation`, their typed results together, which is
`metrics/evaluate.json` written and read back."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.evaluation.experiments import alphabeta, benchmark, fig3, pig_oracle, ratings, solver_games
from pipeline.evaluation.experiments.base import Experiment, ReportContext, Result
from pipeline.evaluation.sections import Section

EXPERIMENTS: list[Experiment] = [
    ratings.EXPERIMENT,
    fig3.EXPERIMENT,
    pig_oracle.EXPERIMENT,
    alphabeta.EXPERIMENT,
    solver_games.EXPERIMENT,
    benchmark.EXPERIMENT,
]


@dataclass
class Evaluation:
    simulations: int  # the champion's search budget (`search.simulations`)
    seconds: float  # spent playing matches; 0 when every one came from the cache
    results: list[Result] = field(default_factory=list)  # in the experiments' order
    skipped: list[str] = field(default_factory=list)  # experiments switched on that cannot run here, and why

    def to_json(self) -> dict:
        data: dict = {"simulations": self.simulations, "seconds": self.seconds}
        for result in self.results:
            data.update(result.to_json())
        return {**data, "skipped": self.skipped}

    @classmethod
    def read(cls, data: dict) -> Evaluation:
        results = [result for e in EXPERIMENTS if (result := e.read(data)) is not None]
        return cls(data["simulations"], data.get("seconds", 0.0), results, data.get("skipped", []))

    def tracked(self) -> list[tuple[str, float, int | None]]:
        return [metric for result in self.results for metric in result.tracked()]

    def headline(self) -> dict[str, float]:
        return {name: value for result in self.results for name, value in result.headline().items()}

    def sections(self, context: ReportContext) -> list[Section]:
        sections = [section for result in self.results for section in result.sections(context)]
        if self.skipped:
            sections.append(Section("Experiments not run", " ".join(self.skipped)))
        return sections


__all__ = ["EXPERIMENTS", "Evaluation", "Experiment", "ReportContext", "Result"]
