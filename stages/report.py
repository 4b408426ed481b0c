"""Stage `report`: the Markdown + PNG report over all generations and the evaluation, and the headline
numbers for `dvc metrics show`. It completes the setting's MLflow parent run: the per-generation
figures of every stage, those DVC reused from an earlier setting included (copied from their metrics
files, each step once), the report, and the champion checkpoint, named by the generation whose network
it is (`champion/gen_2.ckpt` when generations 3 to 6 promoted nothing). It depends on every param of
the setting, so each setting's run is completed by its own report."""

import json

from pipeline.config import load_params
from pipeline.evaluation.run_report import params_section, summary_metrics, write_report
from pipeline.experiments import Evaluation
from pipeline.games import make_game
from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import setting_key, stage_metrics, stage_run, warm_up
from pipeline.plumbing.atomic import remove_leftovers, write_json
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
    figures = {stage: [_read(paths.metrics(stage, g)) for g in gens] for stage in ("selfplay", "train", "gate")}
    evaluation = Evaluation.read(_read(paths.EVALUATION), make_game(params.game))
    start = _read(paths.START)
    preface = (params_section(params, setting_key(params)),)
    written = write_report(
        paths.REPORTS, params.game, figures["selfplay"], figures["train"], figures["gate"], evaluation, start, preface
    )
    summary = summary_metrics(figures["train"], figures["gate"], evaluation)
    write_json(paths.SUMMARY, summary)
    history = [
        (name, value, g)
        for stage, files in figures.items()
        for g, stage_figures in enumerate(files, start=1)
        for name, value in stage_metrics(stage, stage_figures).items()
    ]
    history += [(name, value, step) for name, value, step in evaluation.tracked() if step is not None]
    with stage_run(params, "report", final) as run:
        run.log_history(history)
        run.log_figures(evaluation.one_time_figures(), on_parent=True)
        for path in written:
            run.log_artifact(path, "report", on_parent=True)
        run.log_artifact(paths.best(summary["champion_gen"]), "champion", on_parent=True)
        run.finish_pipeline()


if __name__ == "__main__":
    main()
