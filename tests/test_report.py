"""The report: one self-contained HTML page, a Markdown summary whose images exist, sections only for
the experiments that ran, and a few headline metrics; the evaluation's typed result read back from
its JSON unchanged."""

import json
import re

from alphazero_games.pig.oracle import PigOracleResult
from pipeline.evaluation.run_report import champion_generation, summary_metrics, write_report
from pipeline.experiments import Evaluation
from pipeline.experiments.fig3 import Fig3Result
from pipeline.experiments.ratings import RatingsResult
from pipeline.games import make_game

SELFPLAY = [{"games_per_s": 10.0 + g, "simulations_per_s": 2000.0 + g} for g in range(3)]
TRAIN = [
    {"policy_loss": 1.0 - g / 10, "value_loss": 0.5, "epochs": [{"policy_loss": 1.0, "value_loss": 0.5}]}
    for g in range(3)
]
GATE = [
    {
        "gate_score": 0.6,
        "promoted": g != 1,
        "threshold": 0.55,
        "gate_games": 24,
        "gate_win": 0.5,
        "gate_draw": 0.2,
        "gate_loss": 0.3,
    }
    for g in range(3)
]


def fig3():
    rows = [
        {"opponent_rollouts": level, "score": 0.2, "opponent_score": -0.1, "difference": 0.3, "games": 12}
        for level in (10, 20)
    ]
    with_intervals = [{**row, "ci95_low": low, "ci95_high": 0.5} for row, low in zip(rows, (-0.1, 0.05))]
    return Fig3Result(8, with_intervals, with_intervals)


def ratings():
    table = [
        {"name": "gen0", "rating": 0.0, "ci_low": 0.0, "ci_high": 0.0, "games": 40},
        {"name": "gen1", "rating": 120.0, "ci_low": 60.0, "ci_high": 180.0, "games": 40},
        {"name": "uct4", "rating": 50.0, "ci_low": -10.0, "ci_high": 110.0, "games": 40},
    ]
    table = [dict(sorted(row.items())) for row in table]  # as metrics/evaluate.json gives it back
    versus_first = [{"generation": g, "player": "gen1", "win": 0.6, "draw": 0.1, "loss": 0.3} for g in (1, 2)]
    return RatingsResult(table, {0: "gen0", 1: "gen1", 2: "gen1"}, versus_first)


def evaluation(*results) -> Evaluation:
    return Evaluation(simulations=8, seconds=1.5, results=list(results))


def test_html_embeds_every_plot_and_markdown_links_files(tmp_path):
    written = write_report(tmp_path, "tictacmo", SELFPLAY, TRAIN, GATE, evaluation(ratings(), fig3()))
    page = (tmp_path / "report.html").read_text()
    markdown = (tmp_path / "report.md").read_text()
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["fig3a.png", "fig3b.png", "gate.png", "loss.png", "ratings.png", "speed.png", "versus_first.png"]
    assert page.count("data:image/png;base64,") == len(pngs)
    assert not re.search(r"src=['\"](?!data:)", page), "the page must not load anything from outside"
    assert all(f"({name})" in markdown for name in pngs)
    assert set(written) == {tmp_path / "report.html", tmp_path / "report.md", *tmp_path.glob("*.png")}
    ratings_table = markdown[markdown.index("## Ratings") :]
    assert ratings_table[ratings_table.index("|") :].startswith("| name |"), "the player first, then its figures"


def test_sections_follow_the_experiments_that_ran(tmp_path):
    oracle = [{"opponent": "optimal", "score": 0.49, "ci95_low": 0.46, "ci95_high": 0.52, "games": 1000}]
    exact = [{"opponent": "optimal", "score": 0.4871, "moving_first": 0.55, "moving_second": 0.4242}]
    write_report(
        tmp_path, "pig(players=2,goal=30)", SELFPLAY, TRAIN, GATE, evaluation(PigOracleResult(8, oracle, exact))
    )
    page = (tmp_path / "report.html").read_text()
    assert "Oracle: two-player Pig" in page and "0.460 to 0.520" in page and "0.4871" in page
    assert "Petosa & Balch" not in page and not (tmp_path / "fig3a.png").exists()


def test_fig3_verdict_states_each_level_as_the_table_shows_it(tmp_path):
    """The champion behind the control at one level of three: the text must not say 'NOT ... every level'."""
    control = [{"opponent_rollouts": level, "score": 0.0, "opponent_score": 0.0, "difference": 0.1, "games": 12}
               for level in (10, 20, 40)]  # fmt: skip
    champion = [{**row, "difference": d} for row, d in zip(control, (0.3, 0.1, -0.2))]
    write_report(tmp_path, "tictacmo", SELFPLAY, TRAIN, GATE, evaluation(Fig3Result(8, champion, control)))
    markdown = (tmp_path / "report.md").read_text()
    assert "NOT" not in markdown and "every UCT opponent level" not in markdown
    assert "ahead at 10 (+0.300 vs +0.100); level at 20 (+0.100 vs +0.100); behind at 40 (-0.200 vs +0.100)" in markdown
    assert "ahead at 1 of 3 levels" in markdown and "lower bound" not in markdown, "evaluations before intervals"

    bounded = [{**row, "ci95_low": row["difference"] - 0.15, "ci95_high": row["difference"] + 0.15} for row in champion]
    write_report(tmp_path, "tictacmo", SELFPLAY, TRAIN, GATE, evaluation(Fig3Result(8, bounded, control)))
    markdown = (tmp_path / "report.md").read_text()
    assert "ahead at 10 (+0.300 (+0.150 to +0.450) vs +0.100)" in markdown
    assert "Its 95% lower bound is above zero at 1 of 3." in markdown


def test_the_champion_is_the_last_promoted_generation():
    assert champion_generation([True, True, False, False, False, False]) == 2
    assert champion_generation([False, False]) == 0


def test_summary_metrics_are_a_few_headline_numbers():
    assert summary_metrics(TRAIN, GATE, evaluation(ratings(), fig3())) == {
        "champion_gen": 3,
        "policy_loss": 0.8,
        "value_loss": 0.5,
        "gate_score": 0.6,
        "elo": 120.0,  # generation 2 holds gen1's network
        "fig3_ahead": 0,
        "fig3_surely_above_zero": 1,
    }
    oracle = PigOracleResult(
        8, [{"opponent": "optimal", "score": 0.49123}, {"opponent": "hold_at_20", "score": 0.6}], []
    )
    summary = summary_metrics(TRAIN, [{**g, "promoted": 0.0} for g in GATE], evaluation(oracle))
    assert summary["champion_gen"] == 0 and summary["win_vs_optimal"] == 0.4912 and "elo" not in summary


def test_the_evaluation_reads_back_from_its_json_as_written():
    """metrics/evaluate.json is the stage's output and the report's input: its keys are the
    experiments' own, and reading them back gives the same typed result."""
    written = Evaluation(8, 1.5, [ratings(), fig3()], ["Connect-4 benchmark: no test files."])
    data = json.loads(json.dumps(written.to_json()))
    assert set(data) == {
        "simulations", "seconds", "skipped", "ratings", "player_of_generation", "versus_first",
        "fig3a", "fig3b_control", "alphazero_minus_control", "alphazero_at_least_control_everywhere",
    }  # fmt: skip
    assert data["alphazero_at_least_control_everywhere"] is True
    assert Evaluation.read(data, make_game("tictacmo")) == written
    assert Evaluation.read({"simulations": 8, "seconds": 0.0, "skipped": []}, make_game("connect4")).results == []
