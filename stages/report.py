"""Stage `report`: the Markdown + PNG report over all generations and the evaluation, logged to the
pipeline's MLflow parent run together with the champion checkpoint, named by the generation whose
network it is (`champion/gen_2.ckpt` when generations 3 to 6 promoted nothing); the headline numbers
for `dvc metrics show`."""

import json

from pipeline.atomic import remove_leftovers, write_json
from pipeline.commands.cli import entry_point
from pipeline.config import load_params
from pipeline.jobs.experiments import Evaluation
from pipeline.jobs.report import summary_metrics, write_report
from pipeline.jobs.tracking import stage_run, warm_up
from stages import paths


def _read(path):
    return json.loads(path.read_text())


@entry_point
def main(argv):
    remove_leftovers(paths.REPORTS)
    params = load_params()
    warm_up(params)
    final = params.final_generation
    gens = range(1, final + 1)
    train = [_read(paths.metrics("train", g)) for g in gens]
    gate = [_read(paths.metrics("gate", g)) for g in gens]
    evaluation = Evaluation.read(_read(paths.EVALUATION))
    selfplay = [_read(paths.metrics("selfplay", g)) for g in gens]
    start = _read(paths.START)
    written = write_report(paths.REPORTS, params.game, selfplay, train, gate, evaluation, start)
    summary = summary_metrics(train, gate, evaluation)
    write_json(paths.SUMMARY, summary)
    with stage_run(params, "report", final) as run:
        for path in written:
            run.log_artifact(path, "report", on_parent=True)
        run.log_artifact(paths.best(summary["champion_gen"]), "champion", on_parent=True)
        run.finish_pipeline()


if __name__ == "__main__":
    main()
