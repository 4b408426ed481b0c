"""Stage `init`: the generation-0 network (first best and first candidate), random, warm-started or taught
by a player that needs no network (`teacher`), the compute spent to make it, and an empty replay buffer.
MLflow's parent run is the setting's, found or created by whichever stage logs first
(`pipeline/harness/tracking.py`)."""

import shutil

from pipeline import champions
from pipeline.config import load_params
from pipeline.evaluation.lineage import compute_before
from pipeline.games import make_game
from pipeline.harness.entry import entry_point
from pipeline.harness.tracking import tracking_uri
from pipeline.jobs.replay import empty_samples, save_samples
from pipeline.nets import CheckpointError
from pipeline.plumbing.atomic import remove_leftovers, write_json
from pipeline.plumbing.stores import check_store
from pipeline.plumbing.threads import use_threads
from stages import paths


def checkpoint_sections(params) -> tuple[str, ...]:
    """What generation 0 depends on, for its checkpoint's provenance hash: a taught one on the teacher
    and on what its fit and targets read too."""
    made = ("game", "network", "seed", "warm_start")
    return made + ("teacher", "train", "value") if params.teacher.player is not None else made


@entry_point
def main(argv):
    from pipeline.jobs.teacher import teach, teacher_spec  # here, not above: a teacher's workers import this module
    from pipeline.nets.checkpoint import save_checkpoint

    remove_leftovers(paths.best(0).parent, paths.candidate(0).parent, paths.replay(0).parent, paths.START.parent)
    params = load_params()
    check_store(tracking_uri(params))  # the stages after it log there: a store they cannot use stops the run now
    game = make_game(params.game)
    if params.teacher.player is not None:
        teacher_spec(game, params)  # a teacher the game cannot seat fails before anything is written
    model = starting_network(game, params)  # so does a warm start that does not fit
    start = compute_before(params.warm_start)  # and one whose run's metrics are unreadable
    use_threads(params.threads)
    if params.teacher.player is not None:
        start = teach(game, model, params, resume=paths.saved_fit(0))
    for path in (paths.best(0), paths.candidate(0)):
        save_checkpoint(path, model, game.name, params.section_hash(*checkpoint_sections(params)))
    write_json(paths.START, start)
    save_samples(paths.replay(0), empty_samples(game))
    shutil.rmtree(paths.saved_fit(0), ignore_errors=True)


def starting_network(game, params):
    """The random network of `network` and `seed`, or, with `warm_start`, a trained one of the same game
    and shape: a run goes on from a shipped champion on a machine where its own folder is gone. A shape
    with more blocks grows the trained network (identity blocks appended): a bigger net goes on from a
    small one's plateau; one from before its game declared constant planes reads them as a vector."""
    import torch

    from pipeline.nets.checkpoint import load_checkpoint
    from pipeline.nets.senet import NetworkShape, deepened, initial_network, with_constant_planes, with_score_head

    if params.warm_start is None:
        return initial_network(game, params)
    shape = NetworkShape.for_params(game, params)
    try:
        path = champions.resolve(params.warm_start)
        trained = load_checkpoint(path, game)
    except CheckpointError as err:
        raise CheckpointError(f"warm_start: {err}") from None
    misfits = [
        f"{name}: {value} in the checkpoint, {getattr(shape, name)} asked for"
        for name, value in trained.shape.to_dict().items()
        if value != getattr(shape, name) and not _grows_into(name, value, getattr(shape, name))
    ]
    if misfits:
        raise CheckpointError(
            f"warm_start: {path}: network shape does not match ({'; '.join(misfits)}; only blocks can be added)"
        )
    if shape.constant_planes != trained.shape.constant_planes:
        trained = with_constant_planes(trained, shape.constant_planes)
    torch.manual_seed(params.seed)  # the added blocks' first convolutions, and an added score head
    if shape.score_head != trained.shape.score_head:
        trained = with_score_head(trained, shape.score_head)
    return deepened(trained, shape.blocks)


def _grows_into(name: str, trained: int, asked: int) -> bool:
    """What a warm start can change: more blocks (identity blocks appended), constant planes read as a
    vector by a network trained before its game declared them (`with_constant_planes`), a score head
    added or dropped (`with_score_head`)."""
    return (
        (name == "blocks" and trained < asked) or (name == "constant_planes" and trained == 0) or name == "score_head"
    )


if __name__ == "__main__":
    main()
