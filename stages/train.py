"""Stage `train@g`: continue training generation g-1's candidate on the replay window plus the new
self-play samples; write the new candidate and the updated replay buffer. The fit is saved after
every epoch until the outputs are written, so a stopped stage resumes."""

import shutil

from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import stage_metrics, stage_run
from pipeline.jobs.replay import load_samples, save_samples, windowed
from pipeline.jobs.train import train_network
from pipeline.nets.checkpoint import load_checkpoint, save_checkpoint
from pipeline.plumbing.atomic import write_json
from stages import paths
from stages.start import start


@entry_point
def main(argv):
    gen, prev = int(argv[0]), int(argv[1])
    params, game = start(paths.candidate(gen).parent, paths.replay(gen).parent, paths.metrics("train", gen).parent)
    model = load_checkpoint(paths.candidate(prev), game)
    samples = windowed(load_samples(paths.replay(prev)), load_samples(paths.selfplay_data(gen)), gen, params.train)
    with stage_run(params, "train", gen) as run:
        result = train_network(
            game,
            model,
            samples,
            params.train,
            seed=params.seed + gen,
            logger=run.lightning_logger(),
            progress=True,
            device=params.device,
            resume=paths.saved_fit(gen),
        )
        save_checkpoint(paths.candidate(gen), model, game.name, params.section_hash("game", "network", "train"))
        save_samples(paths.replay(gen), samples)
        figures = {
            "policy_loss": result.policy_loss,
            "value_loss": result.value_loss,
            "samples": result.samples,
            "samples_per_s": result.samples_per_s,
        }
        if result.score_loss is not None:
            figures["score_loss"] = result.score_loss
        write_json(paths.metrics("train", gen), {**figures, "epochs": result.epoch_losses})
        shutil.rmtree(paths.saved_fit(gen), ignore_errors=True)
        run.log_metrics(stage_metrics("train", figures))


if __name__ == "__main__":
    main()
