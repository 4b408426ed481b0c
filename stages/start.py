"""What every generation stage and the evaluation do first, in one place."""

from pathlib import Path

from pipeline.config import Params, load_params
from pipeline.games import Game, make_game
from pipeline.harness.tracking import warm_up
from pipeline.plumbing.atomic import remove_leftovers
from pipeline.plumbing.threads import use_threads


def start(*outputs: Path) -> tuple[Params, Game]:
    """Clear what a killed run left in the stage's output folders (it restarts cleanly), read
    params.yaml, start connecting to the MLflow store (it answers while the stage works), take the
    threads the params ask for, and make the game."""
    remove_leftovers(*outputs)
    params = load_params()
    warm_up(params)
    use_threads(params.threads)
    return params, make_game(params.game)
