"""Stage `report`: the Markdown + PNG report over all generations and the evaluation, logged to the
pipeline's MLflow parent run together with the champion checkpoint."""

import json

from pipeline.atomic import remove_leftovers
from pipeline.cli import entry_point
from pipeline.config import load_params
from pipeline.report import write_report
from pipeline.tracking import stage_run
from stages import paths


def _read(path):
    return json.loads(path.read_text())


@entry_point
def main(argv):
    remove_leftovers(paths.REPORTS)
    params = load_params()
    final = params.final_generation
    gens = range(1, final + 1)
    written = write_report(
        paths.REPORTS,
        params.game,
        selfplay=[_read(paths.metrics("selfplay", g)) for g in gens],
        train=[_read(paths.metrics("train", g)) for g in gens],
        gate=[_read(paths.metrics("gate", g)) for g in gens],
        evaluation=_read(paths.EVALUATION),
    )
    with stage_run(params, "report", final) as run:
        for path in written:
            run.log_artifact(path, "report", on_parent=True)
        run.log_artifact(paths.best(final), "champion", on_parent=True)
        run.finish_pipeline()


if __name__ == "__main__":
    main()
