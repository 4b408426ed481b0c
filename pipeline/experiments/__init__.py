"""The evaluation's experiments, one module each (the interface is `base.py`), in the order they are
planned, summarised and reported: those of every game here, then those the game brings in its own
folder (`games/base.py`'s `BringsExperiments`: Connect-4's alpha-beta table, games against perfect play
and Pons' benchmark, Pig's oracle); and `Evaluation`, their typed results together, which is
`metrics/evaluate.json` written and read back."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.experiments import fig3, ratings
from pipeline.experiments.base import Experiment, ReportContext, Result
from pipeline.experiments.sections import Section
from pipeline.games.base import experiments_of
from pipeline.games.plugins import load_reference

EXPERIMENTS: list[Experiment] = [ratings.EXPERIMENT, fig3.EXPERIMENT]  # every game's


def experiments_for(game) -> list[Experiment]:
    """Every game's experiments, then the game's own, each refused in one line unless it is an
    `Experiment`."""
    own = [load_reference(f"{game.name}'s experiment", reference) for reference in experiments_of(game)]
    if strangers := [repr(e) for e in own if not isinstance(e, Experiment)]:
        raise ValueError(f"{game.name}'s experiments: {strangers[0][:80]} is not an Experiment (experiments/base.py)")
    return [*EXPERIMENTS, *own]


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
    def read(cls, data: dict, game) -> Evaluation:
        """`metrics/evaluate.json` of an evaluation of `game`, read back."""
        results = [result for e in experiments_for(game) if (result := e.read(data)) is not None]
        return cls(data["simulations"], data.get("seconds", 0.0), results, data.get("skipped", []))

    def tracked(self) -> list[tuple[str, float, int | None]]:
        return [metric for result in self.results for metric in result.tracked()]

    def one_time_figures(self) -> dict[str, float]:
        """The figures measured once, at the last generation (no step): MLflow's table, not metrics."""
        return {name: value for name, value, step in self.tracked() if step is None}

    def headline(self) -> dict[str, float]:
        return {name: value for result in self.results for name, value in result.headline().items()}

    def sections(self, context: ReportContext) -> list[Section]:
        sections = [section for result in self.results for section in result.sections(context)]
        if self.skipped:
            sections.append(Section("Experiments not run", " ".join(self.skipped)))
        return sections


__all__ = ["EXPERIMENTS", "Evaluation", "Experiment", "ReportContext", "Result", "experiments_for"]
