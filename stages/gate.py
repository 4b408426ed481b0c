"""Stage `gate@g`: candidate g against the best of g-1; the winner becomes the best of generation g
and a promotion moves the registry's `champion` alias."""

import shutil

from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import stage_metrics, stage_run
from pipeline.plumbing.atomic import atomic_path, write_json
from stages import paths
from stages.start import start


@entry_point
def main(argv):
    from pipeline.jobs.gate import run_gate  # here, not above: the workers import this module (stages/)
    from pipeline.nets.checkpoint import load_checkpoint

    gen, prev = int(argv[0]), int(argv[1])
    params, game = start(paths.best(gen).parent, paths.metrics("gate", gen).parent)
    candidate = load_checkpoint(paths.candidate(gen), game)
    best = load_checkpoint(paths.best(prev), game)
    with stage_run(params, "gate", gen) as run:
        result = run_gate(game, candidate, best, params, gen, progress=True)
        winner = paths.candidate(gen) if result.promoted else paths.best(prev)
        with atomic_path(paths.best(gen)) as tmp:
            shutil.copyfile(winner, tmp)
        figures = {**result.metrics, "threshold": params.gate.threshold}
        write_json(paths.metrics("gate", gen), figures)
        run.log_metrics(stage_metrics("gate", figures))
        if result.promoted:
            run.promote_champion(paths.best(gen))


if __name__ == "__main__":
    main()
