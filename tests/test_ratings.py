"""Bradley-Terry ratings: pairs from games of any size, the fit, anchoring and intervals."""

import numpy as np
import pytest

from pipeline.matches.arena import GameRecord
from pipeline.matches.bradley_terry import RatingsError, fit_bradley_terry, pairwise_results


def _results(counts: dict[tuple[str, str], tuple[int, int, int]]):
    """(a, b) -> (wins of a, draws, losses of a) as result triples."""
    out = []
    for (a, b), (won, drawn, lost) in counts.items():
        out += [(a, b, 1.0)] * won + [(a, b, 0.5)] * drawn + [(a, b, 0.0)] * lost
    return out


def test_n_player_games_give_one_result_per_pair_of_different_agents():
    records = [
        GameRecord(["a", "b", "a", "c"], scores=np.array([1.0, -1.0, 0.0, 0.0])),
        GameRecord(["x", "y"], scores=np.array([-1.0, 1.0])),
    ]
    assert pairwise_results(records) == [
        ("a", "b", 1.0),  # seats 0, 1
        ("a", "c", 1.0),  # seats 0, 3 (seats 0 and 2 are both a: no result)
        ("b", "a", 0.0),  # seats 1, 2
        ("b", "c", 0.0),  # seats 1, 3
        ("a", "c", 0.5),  # seats 2, 3: equal scores
        ("x", "y", 0.0),
    ]


def test_recovers_ratings_drawn_from_a_bradley_terry_model():
    truth = {"g0": 0.0, "g1": 120.0, "g2": 260.0, "uct": -180.0}
    rng = np.random.default_rng(7)
    results = []
    names = list(truth)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
            results += [(a, b, float(won)) for won in rng.random(400) < p]
    table = fit_bradley_terry(results, anchor="g0")
    for name, rating in table.items():
        assert rating.ci_low <= truth[name] <= rating.ci_high, (name, rating)
        assert rating.games == 1200
    assert table["g0"].rating == table["g0"].ci_low == table["g0"].ci_high == 0


def test_symmetric_results_give_equal_ratings():
    cycle = _results({("a", "b"): (5, 2, 3), ("b", "c"): (5, 2, 3), ("c", "a"): (5, 2, 3)})
    table = fit_bradley_terry(cycle)
    for rating in table.values():
        assert rating.rating == pytest.approx(0, abs=1e-9)
        assert rating.ci_high == pytest.approx(-rating.ci_low)
    widths = {round(r.ci_high - r.ci_low, 9) for r in table.values()}
    assert len(widths) == 1


def test_anchoring_moves_the_zero_and_keeps_the_differences():
    results = _results({("a", "b"): (30, 5, 15), ("b", "c"): (20, 10, 20), ("a", "c"): (25, 0, 5)})
    centred = fit_bradley_terry(results)
    anchored = fit_bradley_terry(results, anchor="b")
    assert sum(r.rating for r in centred.values()) == pytest.approx(0, abs=1e-9)
    assert anchored["b"].rating == 0 and anchored["b"].ci_high - anchored["b"].ci_low == 0
    for name in "ac":
        assert anchored[name].rating == pytest.approx(centred[name].rating - centred["b"].rating)
    assert anchored["a"].rating > 0 > anchored["c"].rating
    with pytest.raises(RatingsError, match="anchor 'z'"):
        fit_bradley_terry(results, anchor="z")


def test_intervals_shrink_with_more_games():
    few = fit_bradley_terry(_results({("a", "b"): (6, 2, 4), ("b", "c"): (5, 2, 5)}), anchor="a")
    many = fit_bradley_terry(_results({("a", "b"): (96, 32, 64), ("b", "c"): (80, 32, 80)}), anchor="a")
    for name in "bc":
        assert (many[name].ci_high - many[name].ci_low) < 0.3 * (few[name].ci_high - few[name].ci_low)


def test_an_undefeated_player_gets_a_finite_rating():
    table = fit_bradley_terry(_results({("a", "b"): (10, 0, 0), ("b", "c"): (5, 0, 5)}), anchor="b")
    assert 200 < table["a"].rating < 1000 and np.isfinite(table["a"].ci_high)


def test_players_who_never_met_are_refused():
    results = _results({("a", "b"): (3, 0, 1), ("c", "d"): (2, 0, 2)})
    with pytest.raises(RatingsError, match=r"players \{c, d\} never met \{a, b\}"):
        fit_bradley_terry(results)
    with pytest.raises(RatingsError, match="no pairwise results"):
        fit_bradley_terry([])
