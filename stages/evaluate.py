"""Stage `evaluate`: the experiments switched on in `params.yaml` for the final generation's best
network (and, for ratings, every generation's), with finished matches cached in `data/matches`."""

from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import stage_run
from pipeline.plumbing.atomic import write_json
from stages import paths
from stages.start import start


@entry_point
def main(argv):
    from pipeline.evaluation.evaluate import run_evaluation  # here, not above: the workers import this module
    from pipeline.nets.checkpoint import load_checkpoint

    final = int(argv[0])
    params, game = start(paths.MATCHES, paths.MATCHES / "benchmark", paths.EVALUATION.parent)
    networks = [load_checkpoint(paths.best(g), game) for g in range(final + 1)]
    with stage_run(params, "evaluate", final) as run:
        evaluation = run_evaluation(game, networks, params, paths.MATCHES, progress=True)
        write_json(paths.EVALUATION, evaluation.to_json())
        for name, value, step in evaluation.tracked():
            if step is not None:  # a curve over generations; the one-time figures as a table below
                run.log_metrics({name: value}, step=step)
        run.log_figures(evaluation.one_time_figures())


if __name__ == "__main__":
    main()
