"""Stage `selfplay@g`: the best network of generation g-1 plays itself; samples and figures out.
Finished parts of its games are kept until the samples are written, so a stopped stage resumes."""

import shutil

from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import stage_metrics, stage_run
from pipeline.jobs.replay import save_samples
from pipeline.plumbing.atomic import write_json
from stages import paths
from stages.start import start


@entry_point
def main(argv):
    from pipeline.jobs.selfplay import run_selfplay  # here, not above: the workers import this module (stages/)
    from pipeline.nets.checkpoint import load_checkpoint

    gen, prev = int(argv[0]), int(argv[1])
    params, game = start(paths.selfplay_data(gen).parent, paths.metrics("selfplay", gen).parent)
    model = load_checkpoint(paths.best(prev), game)
    with stage_run(params, "selfplay", gen) as run:
        result = run_selfplay(game, model, params, gen, True, paths.selfplay_parts(gen))
        save_samples(paths.selfplay_data(gen), result.samples)
        write_json(paths.metrics("selfplay", gen), result.metrics)
        shutil.rmtree(paths.selfplay_parts(gen), ignore_errors=True)
        run.log_metrics(stage_metrics("selfplay", result.metrics))


if __name__ == "__main__":
    main()
