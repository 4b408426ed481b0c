"""`python -m pipeline bench` on tiny budgets: every figure is printed once, and is a real number."""

import math

import pytest
import torch

from pipeline.commands import bench
from pipeline.jobs import throughput
from pipeline.matches.workers import chunk_games

TINY = {"network_seconds": 0.05, "selfplay_batches": 1, "train_steps": 2, "move_seconds": 0.01}  # budgets


def test_each_figure_is_one_row():
    # batch 1: one game searched alone, as `analyse` searches one position
    figures = throughput.run(**TINY, batch=1, workers=1)
    assert sorted(figures) == [
        "bare_loop_samples_per_s",
        "batch",
        "connect4",
        "core_peak_gflop_per_s",
        "cpu_count",
        "device",
        "kingdomino(players=4,fit=1)",
        "lightning_overhead",
        "networks",
        "runtime",
        "threads",
        "tictacmo",
        "train_samples_per_s",
    ]
    names = [line.split()[0] for line in bench._table(figures).splitlines()[1:]]
    assert len(names) == len(set(names)) == 10 + 3 * 21 + 4  # Kingdomino's 4 more: with greedy playouts
    assert "tictacmo.selfplay_games_per_min" in names
    for runtime in ("", "torch_"):  # each runtime's network, at the batch and at 1, and its self-play
        for figure in ("network_positions_per_s", "network_positions_per_s_batch1", "network_gflop_per_s"):
            assert f"connect4.{runtime}{figure}" in names
        assert f"kingdomino(players=4,fit=1).{runtime}search_sims_per_s" in names
        assert f"tictacmo.{runtime}timed_move_sims" in names
    assert figures["runtime"] == ("torch" if torch.cuda.is_available() else "onnxruntime")
    assert "connect4.one_process_search_ceiling_sims_per_s" in names
    assert "tictacmo.search_to_workers_network_ratio" in names  # the network as the pool's workers run it
    assert "kingdomino(players=4,fit=1).playouts_search_sims_per_s" in names
    assert figures["device"] == ("cuda" if torch.cuda.is_available() else "cpu")  # auto
    games = ("tictacmo", "connect4", "kingdomino(players=4,fit=1)")
    rates = {f"{game}.{name}": value for game in games for name, value in figures[game].items()}
    top = ("train_samples_per_s", "bare_loop_samples_per_s", "threads", "core_peak_gflop_per_s")
    rates.update({name: figures[name] for name in top})
    assert all(math.isfinite(value) and value > 0 for value in rates.values()), rates
    assert math.isfinite(figures["lightning_overhead"])  # a share of the bare loop's time; noise may make it < 0
    assert all(0 < figures[game]["network_share"] < 1 for game in games)
    assert all(figures[game]["selfplay_games_per_worker"] == 1 for game in games)  # batch 1


def test_a_worker_plays_its_share_of_the_games_at_once_up_to_the_batch():
    """`selfplay_games_per_worker`: the quick bench's 32 Kingdomino games are 16 a worker on two cores, a
    quarter of the 64 its network is timed at; the full bench's 128 fill the batch."""
    assert chunk_games(32, 64, 2) == 16
    assert chunk_games(128, 64, 2) == 64
    assert chunk_games(32, 64, 16) == 2 and chunk_games(1, 64, 4) == 1


def test_phases_split_one_process_self_play_time_and_the_command_prints_a_table_a_game(capsys):
    """Where a simulation's time goes: each phase a share of the whole, the network's and the rules'
    above nothing; `bench --phases` a markdown table per game."""
    from pipeline.jobs.phases import PHASES, phase_seconds

    seconds = phase_seconds("tictacmo", throughput.bench_network("tictacmo")[1], 2)
    assert set(seconds) == {*PHASES, "total"} and all(value >= 0 for value in seconds.values())
    assert math.isclose(sum(seconds[phase] for phase in PHASES), seconds["total"], rel_tol=1e-6)
    assert seconds["network"] > 0 and seconds["rules"] > 0 and seconds["tree walks"] > 0
    bench.main(["--phases", "--games", "tictactoe", "--batch", "4"])
    table = capsys.readouterr().out
    assert table.startswith("tictactoe: ") and "| network | " in table and "| glue | " in table


def test_a_batch_below_one_is_one_error_line(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--batch", "0"])
    assert capsys.readouterr().err.splitlines()[-1].endswith("error: --batch: expected a positive integer, got 0")


def test_games_picks_the_games_measured_any_game_among_them():
    """A game without sizes of its own in `throughput.GAMES` (another variant, a plugin's) is measured with
    the params' default network."""
    figures = throughput.run(**TINY, batch=1, workers=1, games=("tictactoe",))
    assert "tictactoe" in figures and "tictacmo" not in figures and "connect4" not in figures
    assert figures["tictactoe"]["selfplay_games_per_min"] > 0
    assert throughput.bench_sizes("tictactoe")[:2] == (4, 32) and throughput.bench_sizes("connect4")[:2] == (5, 64)


def test_an_unknown_game_is_one_error_line(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--games", "tictacmo,kingdomino(players=4,fit=1),chess"])  # the comma in (...) stays
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.endswith(
        "bench: error: --games: unknown game 'chess'; expected one of connect3x3, connect4, kingdomino,"
        " pig, tictacmo, tictactoe, openspiel:<game>, or module.path:ClassName"
    )


def test_a_served_pool_reports_the_servers_batch_fill_and_busy_fraction():
    figures = throughput.run(**TINY, batch=2, workers=2, games=("tictacmo",), inference_server="on")
    served = figures["tictacmo"]
    assert served["server_batch_fill"] >= 1 and 0 < served["server_busy_fraction"] <= 1


def test_champions_puts_each_games_shipped_champion_on_the_bench():
    from pipeline import champions
    from pipeline.nets.checkpoint import load_checkpoint

    game, model = throughput.bench_network("tictacmo", "champions")
    shipped = load_checkpoint(champions.checkpoint_path("tictacmo"))
    assert model.shape == shipped.shape != throughput.bench_network("tictacmo")[1].shape  # 4 x 32, not 4 x 64
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), shipped.state_dict().values()))
    none_shipped = throughput.bench_network("kingdomino(players=4)", "champions")[1]  # no champion: random weights
    assert torch.equal(none_shipped.stem.weight, throughput.bench_network("kingdomino(players=4)")[1].stem.weight)
