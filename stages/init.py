"""Stage `init`: the random generation-0 network (first best and first candidate), an empty replay
buffer, and the MLflow parent run of this lineage."""

from pipeline.atomic import remove_leftovers
from pipeline.commands.cli import entry_point, use_params_machine
from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.jobs.replay import empty_samples, save_samples
from pipeline.jobs.tracking import RUN_FILE, start_pipeline_run, warm_up
from pipeline.nets.checkpoint import save_checkpoint
from pipeline.nets.senet import initial_network
from stages import paths


@entry_point
def main(argv):
    remove_leftovers(paths.best(0).parent, paths.candidate(0).parent, paths.replay(0).parent, RUN_FILE.parent)
    params = load_params()
    warm_up(params)
    use_params_machine(params)
    game = make_game(params.game)
    model = initial_network(game, params)
    for path in (paths.best(0), paths.candidate(0)):
        save_checkpoint(path, model, game.name, params.section_hash("game", "network", "seed"))
    save_samples(paths.replay(0), empty_samples(game))
    start_pipeline_run(params)


if __name__ == "__main__":
    main()
