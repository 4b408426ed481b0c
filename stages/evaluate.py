"""Stage `evaluate`: the experiments switched on in `params.yaml` for the final generation's best
network (and, for ratings, every generation's), with finished matches cached in `data/matches`."""

import sys

from pipeline.atomic import remove_leftovers, write_json
from pipeline.commands.cli import entry_point, use_params_machine
from pipeline.config import load_params
from pipeline.games import make_game
from pipeline.jobs.evaluate import run_evaluation
from pipeline.jobs.tracking import stage_run, warm_up
from pipeline.nets.checkpoint import load_checkpoint
from stages import paths


@entry_point
def main(argv):
    final = int(argv[0])
    remove_leftovers(paths.MATCHES, paths.MATCHES / "benchmark", paths.EVALUATION.parent)
    paths.MATCHES.mkdir(parents=True, exist_ok=True)  # DVC's output, even when no experiment plays a match
    params = load_params()
    warm_up(params)
    use_params_machine(params)
    game = make_game(params.game)
    networks = [load_checkpoint(paths.best(g), game.name) for g in range(final + 1)]
    with stage_run(params, "evaluate", final) as run:
        results = run_evaluation(game, networks, params, paths.MATCHES, progress=sys.stderr.isatty())
        write_json(paths.EVALUATION, results)
        for experiment in ("fig3a", "fig3b_control"):
            for row in results.get(experiment, []):
                run.log_metrics({f"{experiment}_diff_vs_uct{row['opponent_rollouts']}": row["difference"]})
        ratings = {row["name"]: row["rating"] for row in results.get("ratings", [])}
        for generation, player in results.get("player_of_generation", {}).items():
            run.log_metrics({"elo": ratings[player]}, step=int(generation))
        for row in results.get("benchmark_generations", []):
            name = f"mistakes_{row['set']}_{row['chooser'].replace(' ', '')}"
            run.log_metrics({name: row["percent"]}, step=row["generation"])
        for row in results.get("pig_oracle", []):
            run.log_metrics({f"win_rate_vs_{row['opponent']}": row["score"]})
        for row in results.get("pig_oracle_policy_exact", []):
            run.log_metrics({f"policy_head_exact_win_rate_vs_{row['opponent']}": row["score"]})


if __name__ == "__main__":
    main()
