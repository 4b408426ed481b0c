"""`compare`'s curves: two runs that share a curve point for point (an experiment that changed only
`evaluate` keeps the baseline's training) are named in the caption, since on the chart one line hides
the other."""

from pipeline.evaluation.run_comparison import PipelineRun, comparison_sections, shared_curves


def run(name: str, **curves) -> PipelineRun:
    return PipelineRun(name, name, {}, {}, {metric: list(points) for metric, points in curves.items()})


def test_curves_two_runs_share_are_named_and_the_others_are_not():
    training = [(1, 1.9), (2, 1.5)]
    runs = [
        run("baseline", train_policy_loss=training, elo=[(1, 10.0), (2, 40.0)]),
        run("ratings8", train_policy_loss=training, elo=[(1, 12.0), (2, 35.0)]),
        run("cpuct2", train_policy_loss=[(1, 1.8), (2, 1.6)], elo=[(1, 10.0), (2, 40.0)]),
    ]
    assert shared_curves(runs) == ["elo: baseline = cpuct2", "train_policy_loss: baseline = ratings8"]
    caption = comparison_sections(runs)[1].plots[0].caption
    assert "drawn one over the other: elo: baseline = cpuct2; train_policy_loss: baseline = ratings8." in caption


def test_runs_with_their_own_curves_share_none():
    runs = [run("a", elo=[(1, 1.0)]), run("b", elo=[(1, 2.0)]), run("c")]
    assert shared_curves(runs) == [] and "drawn one over" not in comparison_sections(runs)[1].plots[0].caption
