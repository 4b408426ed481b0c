"""Where a self-play simulation's time goes, phase by phase (issue 84): the network call with its
copies, encoding, the game's rules, the compiled tree walks (selection and backup), expansion (the
compiled expansion's rules and encoding included), and the Python between them. One process plays a
batch of games as a `workers: 1` stage does, under cProfile; each function's own time goes to its
phase, and a library function's (numpy's, a built-in's) to the phase of the code that called it.

cProfile costs a Python call more than a compiled one, so the Python phases read somewhat high here;
`network_share` (`throughput.py`) times the network alone, without a profiler, for the figure itself.
"""

from __future__ import annotations

import cProfile
import inspect
import pstats
import time
from pathlib import Path

from pipeline.agents.recipes import selfplay_player
from pipeline.games import make_game
from pipeline.jobs.throughput import selfplay_params
from pipeline.matches.arena import play_games

PHASES = ("network", "encode", "rules", "tree walks", "expansion", "glue")
_SEARCH = Path(__file__).resolve().parents[1] / "search"
_NETS = Path(__file__).resolve().parents[1] / "nets"


def phase_seconds(game_name: str, model, games: int) -> dict[str, float]:
    """Seconds of each phase in one process's self-play of `games` games at once (after a warm-up that
    compiles the kernels), and `total`."""
    game = make_game(game_name)
    spec = selfplay_player(model, selfplay_params(game_name, games, games))
    play_games(game, [[spec.build(game)] * game.num_players] * 2, seed=1, parallel=2)  # compile, load
    agent = spec.build(game)
    profile = cProfile.Profile()
    started = time.perf_counter()
    profile.enable()
    play_games(game, [[agent] * game.num_players] * games, seed=0, parallel=games)
    profile.disable()
    total = time.perf_counter() - started
    rules = Path(inspect.getfile(type(game))).resolve().parent
    seconds = dict.fromkeys(PHASES, 0.0)
    for function, (_, _, own, _, callers) in pstats.Stats(profile).stats.items():
        phase = _phase(function, rules)
        if phase is not None:
            seconds[phase] += own
            continue
        for caller, edge in callers.items():  # a library's time, to whoever called it
            seconds[_phase(caller, rules) or "glue"] += edge[2]
    scale = total / sum(seconds.values())  # the profiler's own time, spread as the phases are
    return {phase: value * scale for phase, value in seconds.items()} | {"total": total}


EXPANSION_KERNELS = ("reach_leaves", "take_outcomes", "settle_leaves", "clear_nodes")  # the rest: tree walks


def _phase(function: tuple, rules: Path) -> str | None:
    """The phase of a profiled function (file, line, name); None for a library's."""
    filename, _, name = function
    if "onnxruntime" in name or "torch" in filename or "onnxruntime" in filename:
        return "network"
    path = Path(filename).resolve() if filename.startswith("/") else None
    if path is None or "site-packages" in path.parts or "lib" in path.parts and "python3" in str(path):
        return None
    if "encode" in name:
        return "encode"
    if path.is_relative_to(rules):
        return "rules"
    if path.parent == _NETS:
        return "network"
    if path == _SEARCH / "tree_kernels.py":  # the compiled expansion steps, encodes and adds the new nodes
        return "expansion" if name in EXPANSION_KERNELS else "tree walks"
    if path == _SEARCH / "forest.py":
        return "expansion"
    return "glue"
