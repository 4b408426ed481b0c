"""Tuning, three ways (docs/tuning.md): an Optuna study of the training settings that make the strongest
agent for a fixed compute budget (`sweep`); of how a trained network searches at play time (`sweep --play
NETWORK`); or population-based training, settings tuned while the networks train (`sweep --population`).

`python -m pipeline sweep [--params F] [--storage URL] [--trials N] [--jobs J] [--confirm] [--report-only]
[--versus-baseline G]` (the study itself: `pipeline/sweeps/study.py`). With `--confirm` the study's top
settings and its baseline are trained again from fresh seeds and played head to head; the report then
recommends what survived (`pipeline/sweeps/confirmation.py`).

Storage: `--storage`, else `sweep.storage`, else `$OPTUNA_STORAGE`, else `sqlite:///<project>/sweep.db`.
Running the command again, here or on other machines, adds workers or resumes; the report (best params,
every trial, plots) is written to `--out` (default `sweeps/<study>`) when the workers are done.

`--play NETWORK` (a checkpoint or a shipped champion's name) tunes how that network searches at play
time instead, `sweep.play` of its params (`pipeline/sweeps/play.py`): `--confirm` then plays the top
settings and the shipped one again on fresh seeds. Its params: `--params`, else the params a shipped
champion was trained with and its card's `play.search`, else `params.yaml` where it plays the network's
game.

`--population` trains `sweep.population.members` networks side by side instead, on Ray Tune's
population-based training (`pipeline/sweeps/population.py`): its folder is `--dir/<study>` (default
`populations/<study>`), where running the command again resumes it; the report, the champion and its
params go to `--out` (default `sweeps/<study>`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from pipeline.commands.cli import command_parser, refuse_outside
from pipeline.config import MAX_GAMES, MAX_WORKERS
from pipeline.harness.entry import UsageError, entry_point

CONFIRMED_SETTING = "confirmed_setting"  # the parent run's tag: the setting a confirmation recommends
# Optuna, MLflow and torch are imported by the functions below, after every argument's one-line error:
# their imports take seconds on a loaded machine.


@entry_point
def main(argv):
    parser = command_parser("sweep", __doc__)
    parser.add_argument(
        "--params",
        default=None,
        help="default: params.yaml; with --play, a shipped champion's own params and card, else params.yaml",
    )
    parser.add_argument(
        "--play", metavar="NETWORK", help="tune how this network searches at play time (sweep.play), not training"
    )
    parser.add_argument(
        "--population", action="store_true", help="population-based training on Ray Tune (sweep.population)"
    )
    parser.add_argument("--dir", default="populations", help="with --population: the folder of its runs")
    parser.add_argument(
        "--storage", default=None, help="default: sweep.storage, else $OPTUNA_STORAGE, else sqlite:///sweep.db"
    )
    parser.add_argument("--trials", type=int, default=None, help="default: sweep.trials")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes on this machine")
    parser.add_argument("--worker", type=int, default=0, help="this machine's first worker index (sampler seed)")
    parser.add_argument("--out", default=None, help="report folder; default sweeps/<study>")
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="re-train the top settings and the baseline from fresh seeds (sweep.confirm) and play them head to "
        "head; with --play: play the top settings and the shipped one again on fresh seeds",
    )
    parser.add_argument("--report-only", action="store_true", help="write the report of the study as it stands")
    parser.add_argument(
        "--versus-baseline", type=int, default=0, metavar="G", help="best vs baseline trial, G games per seating"
    )
    args = parser.parse_args(argv)
    refuse_outside(1, MAX_WORKERS, {"--jobs": args.jobs})  # before a study or a run is opened
    refuse_outside(1, MAX_GAMES, {"--trials": args.trials})
    refuse_outside(0, MAX_WORKERS, {"--worker": args.worker})
    refuse_outside(0, MAX_GAMES, {"--versus-baseline": args.versus_baseline})
    if args.play and args.population:
        raise UsageError("--play and --population: one study at a time")
    if args.out and Path(args.out).exists() and not Path(args.out).is_dir():  # before any trial, not after all
        raise UsageError(f"--out: {args.out} is a file; expected the report's folder")
    if args.play:
        return play_sweep(args)
    if args.population:
        return population_sweep(args)
    training_sweep(args)


def training_sweep(args) -> None:
    """The study of how networks are trained, its confirmation and its report."""
    from pipeline.config import load_params
    from pipeline.sweeps.space import check_space, panel_players
    from pipeline.sweeps.storage import open_storage, resolve_storage

    params_path = args.params or "params.yaml"
    params = load_params(params_path)
    url = resolve_storage(args.storage, params)
    if not args.report_only:
        # a bad panel, space, URL or driver stops here, before torch is imported and any worker starts
        panel_players(params)
        check_space(params, params.sweep.space, "sweep.space")
        open_storage(url)

    import optuna

    from pipeline.plumbing.atomic import write_json
    from pipeline.sweeps import confirmation
    from pipeline.sweeps.study import CONFIRMED, VERSUS, open_study, sweep_trials, versus_baseline
    from pipeline.sweeps.training_report import write_report

    trials = args.trials or params.sweep.trials
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    failed = []
    prepare = confirmation.prepare if args.confirm else sweep_trials
    if not args.report_only:
        failed = run(args, params_path, url, trials, prepare)
    study = open_study(params, open_storage(url))
    out = Path(args.out or Path("sweeps") / params.sweep_study())
    metrics, tags = {}, {}
    if args.confirm and not failed:
        figures = confirmation.confirm(params, confirmation.open_confirmation(open_storage(url), study.study_name))
        write_json(out / CONFIRMED, figures)
        metrics, tags = confirmation.metrics(figures), {CONFIRMED_SETTING: figures["recommended"]}
    if args.versus_baseline:
        versus = versus_baseline(study, params, args.versus_baseline)
        write_json(out / VERSUS, versus)
        metrics |= {f"versus_baseline_{key}": versus[key] for key in ("score", "ci95_low", "ci95_high")}
    report = write_report(study, params, Path(params_path), out)
    finish(params, study, url, metrics, out, report, failed, tags)


def run(args, source, url: str, trials: int, prepare, objective=None) -> list[str]:
    """The study's workers: this process alone, or `--jobs` processes; one line for each that failed.
    `objective`: a training trial's where None."""
    from pipeline.sweeps.study import Objective
    from pipeline.sweeps.workers import run_worker, run_workers

    objective = objective or Objective
    if args.jobs == 1:
        run_worker(source, url, trials, args.worker, prepare=prepare, objective=objective)
        return []
    return run_workers(source, url, trials, args.worker, args.jobs, prepare, objective)


def finish(params, study, url: str, metrics: dict, out: Path, report: Path, failed: list[str], tags=None) -> None:
    from pipeline.sweeps.workers import publish_report

    publish_report(params, study, url, metrics, out, tags)
    print(f"report: {report}")
    if failed:  # the report shows the study as it stands; a re-run finishes it
        raise SystemExit("error: " + "; ".join(failed) + "; run the command again to finish the study")


def population_sweep(args) -> None:
    """`--population`: the members trained side by side, their report and the champion."""
    for option in ("confirm", "versus_baseline", "storage", "trials"):
        if getattr(args, option):
            raise UsageError(f"--{option.replace('_', '-')}: a training sweep's; a population has none")
    from pipeline.config import load_params
    from pipeline.sweeps.space import check_population

    params_path = Path(args.params or "params.yaml")
    params = load_params(params_path)
    check_population(params)  # a bad space or panel: one line, before Ray and torch are imported
    from pipeline.harness.tracking import log_to_run, sweep_parent_run

    try:
        from pipeline.sweeps import population, population_report  # Ray Tune: seconds to import
    except ImportError as err:
        if (err.name or "").split(".")[0] not in ("ray", "tensorboardX"):
            raise
        raise UsageError("--population runs on Ray Tune: pip install -e '.[population]'") from None

    folder = Path(args.dir).resolve() / params.population_study()
    if args.report_only:
        results = population.tuner(params, folder, []).get_results()
    else:
        results = population.run_population(params, folder)
    out = Path(args.out or Path("sweeps") / params.population_study())
    shown = Path(args.dir) / params.population_study()  # as the user named it: Ray Tune needs it absolute
    report, headline = population_report.write_report(results, params, params_path, shown, out)
    parent = sweep_parent_run(params, params.population_study(), population.open_folder(params, folder), {})
    log_to_run(params, parent, headline, out)
    print(f"report: {report}")
    if results.errors:
        raise SystemExit(f"error: {len(results.errors)} members failed; run the command again to go on")


def play_sweep(args) -> None:
    """`--play NETWORK`: the play-time study of the network, its confirmation and its report."""
    from pipeline import champions
    from pipeline.commands.networks import card_search, local_game, network_params, trusted_game
    from pipeline.config import PLAY_SHIPPED, load_params
    from pipeline.games import make_game
    from pipeline.nets.header import check_header, stored_game
    from pipeline.sweeps.space import check_space, panel_players, with_overrides
    from pipeline.sweeps.storage import open_storage, resolve_storage

    if args.versus_baseline:
        raise UsageError("--versus-baseline: a training sweep's; a play-time sweep's is --confirm")
    path = champions.resolve(args.play)
    # The game the file says, read before torch is imported: the panel, space and storage checks below
    # need it. A file the light reader cannot read gets the full load's line.
    spec = stored_game(path)
    if spec is None:
        check_header(path)  # a file the light reader refuses: one line before torch
        from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint

        load_checkpoint(path)
        spec = checkpoint_game(path)
    game = trusted_game(spec, load_params(args.params).game if args.params else local_game(), path)
    check_header(path, make_game(game))  # a damaged or misfit file: one line before torch
    params = card_search(network_params(args.params, args.play, game), args.play)  # `shipped`: as its card says
    url = resolve_storage(args.storage, params)
    if not args.report_only:
        panel_players(params, params.sweep.play.panel, "sweep.play.panel", passes=(PLAY_SHIPPED,))
        check_space(params, params.sweep.play.space, "sweep.play.space", with_overrides)
        open_storage(url)

    import optuna

    from pipeline.nets.checkpoint import load_checkpoint
    from pipeline.plumbing.atomic import write_json
    from pipeline.sweeps import play, play_report

    load_checkpoint(path, make_game(game))  # the weights: a lying or damaged file is one line before any trial
    network = str(path)
    trials = args.trials or params.sweep.play.trials
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    failed = []
    if args.confirm:
        prepare, objective = partial(play.prepare_confirmation, network), partial(play.ConfirmationUnit, network)
    else:
        prepare, objective = partial(play.prepare, network), partial(play.Objective, network)
    if not args.report_only:
        failed = run(args, params, url, trials, prepare, objective)
    study = play.open_play_study(params, open_storage(url), network)
    out = Path(args.out or Path("sweeps") / study.study_name)
    metrics, tags = {}, {}
    if args.confirm and not failed:
        figures = play.confirm(params, play.open_confirmation(open_storage(url), study.study_name))
        write_json(out / play.CONFIRMED, figures)
        metrics, tags = play.metrics(figures), {CONFIRMED_SETTING: figures["recommended"]}
    report = play_report.write_report(study, params, args.play, out)
    finish(params, study, url, metrics, out, report, failed, tags)


if __name__ == "__main__":
    main()
