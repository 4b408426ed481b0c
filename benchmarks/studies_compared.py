"""Studies side by side at equal compute: the best trial each had found once it had trained N
generations (over every trial, pruned and lost ones included), as a table and a plot. This is how a
pruned study is weighed against a plain one (issue 35): the pruner's promise is a better best for the
same compute. A trial's generations count when it ends, in the order the trials ended; a trial still running or
cut off when the study stopped counts at the end.

Usage: python benchmarks/studies_compared.py STORAGE:STUDY [STORAGE:STUDY ...] [--at 40 71] [--plot PNG]
(STORAGE is an SQLite file; e.g. runs/c3-study/sweep.db:connect3x3-search)"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import optuna  # noqa: E402

ENDED = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.FAIL)
RUNNING = optuna.trial.TrialState.RUNNING


def best_against_compute(study: optuna.Study) -> list[tuple[int, float, int]]:
    """(generations spent, best complete trial's strength so far, its number) after each trial ended."""
    ended = sorted((t for t in study.get_trials(deepcopy=False) if t.state in ENDED), key=lambda t: t.datetime_complete)
    steps, spent, best, best_number = [], 0, float("nan"), -1
    for trial in ended:
        spent += len(trial.intermediate_values)
        if trial.state == optuna.trial.TrialState.COMPLETE and not trial.values[0] <= best:
            best, best_number = trial.values[0], trial.number
        steps.append((spent, best, best_number))
    cut_off = sum(len(t.intermediate_values) for t in study.get_trials(deepcopy=False, states=(RUNNING,)))
    if cut_off:  # still running, or cut off when the study stopped: spent all the same
        steps.append((spent + cut_off, best, best_number))
    return steps


def best_at(steps: list[tuple[int, float, int]], generations: int) -> tuple[float, int]:
    """The best found within a budget of generations: the last step that does not exceed it."""
    within = [(best, number) for spent, best, number in steps if spent <= generations]
    return within[-1] if within else (float("nan"), -1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("studies", nargs="+", help="STORAGE:STUDY, STORAGE an SQLite file")
    parser.add_argument("--at", type=int, nargs="*", default=[], help="budgets in generations for the table")
    parser.add_argument("--plot", help="PNG: best strength so far against generations trained")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    curves = {}
    for entry in args.studies:
        path, _, name = entry.rpartition(":")
        curves[name] = best_against_compute(optuna.load_study(study_name=name, storage=f"sqlite:///{path}"))
    budgets = " | ".join(f"best at {n}" for n in args.at)
    print(f"| study | generations trained | best strength (trial) | {budgets} |")
    print("|---|---|---|" + "---|" * len(args.at))
    for name, steps in curves.items():
        spent, best, number = steps[-1] if steps else (0, float("nan"), -1)
        at = [best_at(steps, n) for n in args.at]
        cells = " | ".join(f"{b:.3f} ({k})" for b, k in at)
        print(f"| {name} | {spent} | {best:.3f} ({number}) | {cells} |")
    if args.plot:
        fig, ax = plt.subplots(figsize=(7, 4))
        for name, steps in curves.items():
            ax.step([s for s, _, _ in steps], [b for _, b, _ in steps], where="post", label=name)
        ax.set_xlabel("generations trained, every trial")
        ax.set_ylabel("best complete trial's strength")
        ax.set_title("Best setting found against compute")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
