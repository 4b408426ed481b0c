"""The `evaluate` stage's experiments (`pipeline/experiments/`), each switched on and budgeted in
`params.yaml` (`evaluate:`).

Every experiment plans its matches (agents, seatings); all matches not found in the match cache are
played on one pool of workers and each is saved the moment it completes, so an interrupted
evaluation resumes without replaying finished matches and a new generation plays only new matches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pipeline import seeds
from pipeline.agents.spec import AgentSpec
from pipeline.config import Params
from pipeline.experiments import Evaluation, experiments_for
from pipeline.experiments.base import Plan, PlannedMatch, Setting
from pipeline.matches.arena import GameRecord
from pipeline.matches.cache import MatchCache
from pipeline.matches.workers import Workers, play_matches
from pipeline.nets.checkpoint import weights_digest
from pipeline.nets.senet import SENet

# The identity seeds a match's games (`seeds.evaluation_match`): where it once held Pig's hold-at
# threshold, 20 unless set, it still does, so runs before a game's players had one number draw the same games.
HELD_SLOT = "20"


def spec_identity(spec: AgentSpec) -> str:
    """What makes a player play the way it does: its recipe and, for networks, the weights' content."""
    search = repr(spec.search) + (f" fpu_reduction={spec.search.fpu_reduction}" if spec.search.fpu_reduction else "")
    parts = [spec.name, spec.kind, repr(spec.play), search, str(spec.seed), str(spec.epsilon)]
    parts += [HELD_SLOT, str(spec.number)]
    if spec.network is not None:
        parts.append(weights_digest(spec.network[1]))
    return "|".join(parts)


def play_planned(game, matches: list[PlannedMatch], params: Params, cache: MatchCache, progress: bool) -> float:
    """Fill every match's records from the cache or by playing it; return the seconds spent playing."""
    specs: dict[str, AgentSpec] = {}
    identities: dict[str, str] = {}
    todo = []
    for match in matches:
        for spec in match.agents:
            identity = identities.setdefault(spec.name, spec_identity(spec))
            if identity != spec_identity(spec):
                raise ValueError(f"evaluate: two different agents are both named {spec.name!r}")
            specs.setdefault(spec.name, spec)
        key = cache.key(
            game=game.name,
            agents=[identities[s.name] for s in match.agents],
            seatings=match.seatings,
            starts=[repr(state) for state in match.starts or []],
            seed=params.seed,
            workers=params.workers,  # the chunking decides the games; the backend does not
            parallel=params.evaluate.parallel_games,
        )
        found = cache.get(key)
        if found is not None:
            match.records = [
                GameRecord(r["seating"], scores=np.array(r["scores"]), actions=r["actions"]) for r in found
            ]
        else:
            todo.append((match, key))
    if not todo:
        return 0.0
    names = list(specs)
    seeded = []
    for match, key in todo:
        index = [names.index(s.name) for s in match.agents]
        seatings = [[index[i] for i in seating] for seating in match.seatings]
        seeded.append((seatings, seeds.evaluation_match(params.seed, key), match.starts))

    def save(i: int, result) -> None:
        match, key = todo[i]
        match.records = result.records
        cache.put(
            key, [{"seating": r.seating, "scores": r.scores.tolist(), "actions": r.actions} for r in result.records]
        )

    results = play_matches(
        game.name,
        [specs[n] for n in names],
        seeded,
        parallel=params.evaluate.parallel_games,
        workers=Workers.from_params(params),
        progress="evaluate" if progress else None,
        on_match=save,
    )
    return max(r.seconds for r in results)


def run_evaluation(game, networks: list[SENet], params: Params, cache_dir: Path, progress=True) -> Evaluation:
    """Every enabled experiment that applies to this game, for the best network of each generation
    (`networks[g]`, the last being the champion). Experiments that are on but cannot run here (missing
    test files, nothing to compare) are listed in `skipped` with the reason."""
    setting = Setting(game, networks, params, Path(cache_dir), progress)
    plans: list[Plan] = []
    skipped: list[str] = []
    for experiment in experiments_for(game):
        switch = getattr(params.evaluate, experiment.name, None)  # a plugin game's own experiment has none: on
        if switch is not None and not switch.enabled:
            continue
        planned = experiment.plan(setting)
        if isinstance(planned, str):
            skipped.append(planned)
        elif planned is not None:
            plans.append(planned)
    matches = [m for plan in plans for m in plan.matches]
    seconds = play_planned(game, matches, params, MatchCache(cache_dir), progress)
    return Evaluation(params.search.simulations, seconds, [plan.summarise() for plan in plans], skipped)
