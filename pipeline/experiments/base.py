"""What every evaluation experiment is: it plans matches, which the evaluation plays on one pool of
workers (finished ones read from the match cache), then summarises them into a typed result. A result
knows its keys of `metrics/evaluate.json` (written and read back only here), its MLflow metrics, its
headline numbers for `metrics/summary.json` and its report sections; so an experiment is one module
of this folder plus its section of `params.evaluate`, listed once in `EXPERIMENTS` (`__init__.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pipeline.agents.spec import AgentSpec
from pipeline.config import Params
from pipeline.experiments.sections import Section
from pipeline.matches.arena import GameRecord
from pipeline.nets.senet import SENet


@dataclass
class PlannedMatch:
    experiment: str
    label: object  # what the experiment reads back: an opponent level, a (depth, sims) cell, ...
    agents: list[AgentSpec]
    seatings: list[list[int]]  # indices into `agents`
    records: list[GameRecord] = field(default_factory=list)
    starts: list | None = None  # opening states, one per game (default: the initial position)


@dataclass
class Setting:
    """What an experiment is run on: the best network of each generation (the last is the champion)."""

    game: object
    networks: list[SENet]
    params: Params
    cache_dir: Path  # finished matches; an experiment may keep its own scores in a folder under it
    progress: bool = True

    @property
    def champion(self) -> SENet:
        return self.networks[-1]


@dataclass
class ReportContext:
    """What a result's report sections may draw on besides the result: the training's figures."""

    game: str
    selfplay: list[dict]
    train: list[dict]
    gate: list[dict]
    start: dict | None = None  # compute spent before generation 0 (a warm start's; metrics/start.json)


class Result(Protocol):
    def to_json(self) -> dict:
        """Its keys of `metrics/evaluate.json`."""

    def tracked(self) -> list[tuple[str, float, int | None]]:
        """MLflow metrics: (name, value, step or None)."""

    def headline(self) -> dict[str, float]:
        """Numbers for `metrics/summary.json` (`dvc metrics show`)."""

    def sections(self, context: ReportContext) -> list[Section]: ...


@dataclass
class Plan:
    """An experiment's matches, and how to summarise them once they are played (called in the
    experiments' order, after every match of the evaluation is played)."""

    matches: list[PlannedMatch]
    summarise: Callable[[], Result]


@dataclass(frozen=True)
class Experiment:
    name: str  # its section of `params.evaluate`, whose `enabled` switches it
    plan: Callable[[Setting], Plan | str | None]  # None: not for this game; a str: why it cannot run here
    read: Callable[[dict], Result | None]  # its result from `metrics/evaluate.json`, None where it did not run
