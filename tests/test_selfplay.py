"""Self-play strategies: AlphaZero with playout cap randomization, and Parikh & Wu's greedy TD(lambda)."""

import numpy as np
import pytest
import torch

import pipeline.jobs.selfplay as selfplay
from pipeline.agents.greedy import GreedyValueAgent
from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.jobs.selfplay import distinct_share, random_openings, run_selfplay, td_lambda_returns
from pipeline.jobs.selfplay_parts import PartStore
from pipeline.matches.workers import play_matches
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.search import UniformEvaluator


def tiny(game_name="tictacmo", **selfplay):
    params = parse_params(
        {
            "game": game_name,
            "workers": 1,
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "search": {"simulations": 12},
            "selfplay": {"games": 8, "parallel_games": 8, **selfplay},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )
    game = make_game(game_name)
    torch.manual_seed(0)
    return game, SENet(NetworkShape.for_game(game, **params.network.model_dump())), params


def test_td_lambda_returns_by_hand():
    # three positions; V(s1) = [0.5, -0.5], V(s2) = [0.2, -0.2]; the game ends [1, -1]
    next_values = np.array([[0.5, -0.5], [0.2, -0.2]])
    returns = td_lambda_returns(next_values, np.array([1.0, -1.0]), gamma=0.9, lam=0.5)
    g2 = 0.9 * 1.0
    g1 = 0.9 * (0.5 * 0.2 + 0.5 * g2)
    g0 = 0.9 * (0.5 * 0.5 + 0.5 * g1)
    assert np.allclose(returns[:, 0], [g0, g1, g2]) and np.allclose(returns[:, 1], [-g0, -g1, -g2])
    # lambda = 1, gamma = 1: every position gets the final outcome (Monte Carlo)
    assert np.allclose(td_lambda_returns(next_values, np.array([1.0, -1.0]), 1.0, 1.0)[:, 0], 1.0)


def test_distinct_share_counts_repeated_positions_once():
    states = np.zeros((4, 2, 3, 3), dtype=np.uint8)
    states[1, 0, 0, 0] = 1
    states[2, 1, 2, 2] = 1  # states 0 and 3 are the same position
    assert distinct_share(states) == 3 / 4
    assert distinct_share(states[:0]) == 0.0


def test_greedy_player_takes_a_winning_move():
    game = make_game("connect4")
    state = game.initial_state()
    for move in [0, 6, 1, 6, 2, 5]:
        state, _ = game.step(state, move)
    agent = GreedyValueAgent(game, UniformEvaluator(game), epsilon=0.0)
    agent.begin(0, state, np.random.default_rng(0))
    ((action, policy),) = agent.act([0])
    assert action == 3 and policy[3] == 1.0 and policy.sum() == 1.0


def test_playout_cap_records_only_full_searches():
    game, model, full = tiny()
    _, _, capped = tiny(full_search_fraction=0.25, fast_simulations=3)
    everything = run_selfplay(game, model, full, generation=1, progress=False)
    some = run_selfplay(game, model, capped, generation=1, progress=False)
    positions = everything.metrics["samples"]
    assert positions == pytest.approx(everything.mean_length * everything.games)
    fraction = some.metrics["samples"] / (some.mean_length * some.games)
    assert 0.1 < fraction < 0.45
    assert some.simulations < everything.simulations


def test_greedy_td_self_play_makes_discounted_targets():
    game, model, params = tiny(strategy="greedy_td", greedy_epsilon=0.2, td_gamma=0.9, td_lambda=0.9)
    result = run_selfplay(game, model, params, generation=1, progress=False)
    samples = result.samples
    assert len(samples["values"]) == pytest.approx(result.mean_length * result.games)
    assert np.all(np.abs(samples["values"]) <= 0.9 + 1e-6)  # discounted at least once
    assert set(np.unique(samples["policies"])) == {0.0, 1.0}  # one-hot greedy moves
    again = run_selfplay(game, model, params, generation=1, progress=False)
    assert np.array_equal(again.samples["states"], samples["states"])


@pytest.fixture
def played(monkeypatch):
    """The games each self-play run plays, all its parts' records in order, as they come back from
    play_matches."""
    runs = []

    def recording_play_matches(*args, **kwargs):
        results = play_matches(*args, **kwargs)
        runs.append([record for result in results for record in result.records])
        return results

    monkeypatch.setattr(selfplay, "play_matches", recording_play_matches)
    return runs


def test_root_value_weight_mixes_search_values_into_the_targets(played):
    spec = "pig(players=2,goal=20)"
    runs = {}
    for w in (0.0, 0.5, 1.0):
        game, model, params = tiny(spec, games=4, temperature_moves=0, root_value_weight=w)
        runs[w] = run_selfplay(game, model, params, generation=1, progress=False).samples
    records = played[-1]  # the same games every time: the targets do not change play
    assert all(np.array_equal(runs[w]["states"], runs[0.0]["states"]) for w in runs)
    movers = [m for r in records for m in r.policy_movers]
    outcomes = [game.scores(r.final_state) for r in records for _ in r.states]  # win_loss: +-1
    root_values = [q for r in records for q in r.root_values]
    assert len(root_values) == len(movers) == len(runs[1.0]["values"])
    assert np.array_equal(runs[0.0]["values"], np.stack([rotate_to_mover(z, m) for z, m in zip(outcomes, movers)]))
    q = np.stack([rotate_to_mover(v, m) for v, m in zip(root_values, movers)])
    assert np.allclose(runs[1.0]["values"], q, atol=1e-6)
    assert np.abs(q).max() <= 1 and (np.abs(q) < 0.9).mean() > 0.5  # mostly search averages, not outcomes
    assert np.allclose(runs[0.5]["values"], (runs[0.0]["values"] + runs[1.0]["values"]) / 2, atol=1e-6)


def test_temperature_after_samples_the_later_plies(played):
    off_argmax = {}
    for temperature_after in (0.0, 1.0):
        game, model, params = tiny(temperature_moves=2, temperature_after=temperature_after)
        run_selfplay(game, model, params, generation=1, progress=False)
        later = [
            (action, policy)
            for record in played[-1]
            for ply, (action, policy) in enumerate(zip(record.actions, record.policies))
            if ply >= 2
        ]
        assert len(later) > 20
        off_argmax[temperature_after] = sum(action != int(np.argmax(policy)) for action, policy in later)
    assert off_argmax[0.0] == 0  # the most visited move after the opening plies
    assert off_argmax[1.0] > 0  # sampled in proportion to the visits


def test_root_value_weight_is_refused_without_search():
    with pytest.raises(ConfigError, match=r"selfplay: root_value_weight: must be 0 with strategy greedy_td"):
        tiny(strategy="greedy_td", root_value_weight=0.5)


def test_random_openings_start_games_from_random_positions_that_are_not_trained_on(played):
    game, model, params = tiny("connect4", random_opening_plies=10)
    result = run_selfplay(game, model, params, generation=1, progress=False)
    records = played[-1]
    first_plies = [game.ply(record.states[0]) for record in records]
    assert len(set(first_plies)) > 2 and max(first_plies) <= 10
    assert result.metrics["samples"] == sum(len(record.actions) for record in records)  # the searched moves
    again = run_selfplay(game, model, params, generation=1, progress=False)
    assert np.array_equal(again.samples["states"], result.samples["states"])


def test_random_openings_stop_before_the_game_ends():
    game = make_game("tictactoe")
    assert random_openings(game, 3, 0, [0, 1, 2]) is None
    starts = random_openings(game, 200, 9, [0, 1, 2])
    plies = [game.ply(state) for state in starts]
    assert not any(game.is_terminal(state) for state in starts)
    assert min(plies) == 0 and max(plies) >= 6


def test_a_stopped_self_play_resumes_from_its_saved_parts_with_the_same_games(tmp_path, played, monkeypatch, caplog):
    game, model, params = tiny(games=8, parallel_games=2)  # one worker: four parts of two games
    whole = run_selfplay(game, model, params, generation=1, progress=False)
    saved = []

    def put_then_stop(store, number, part):
        if len(saved) == 2:
            raise KeyboardInterrupt  # Ctrl-C (or a kill) with two parts saved
        saved.append(number)
        real_put(store, number, part)

    real_put = PartStore.put
    monkeypatch.setattr(PartStore, "put", put_then_stop)
    with pytest.raises(KeyboardInterrupt):
        run_selfplay(game, model, params, generation=1, progress=False, parts=tmp_path)
    monkeypatch.setattr(PartStore, "put", real_put)
    assert saved == [0, 1] and len(list(tmp_path.glob("part_*.npz"))) == 2
    first = next(tmp_path.glob("part_0.*.npz"))
    first.write_bytes(first.read_bytes()[:100])  # a damaged part is played again, never trusted

    resumed = run_selfplay(game, model, params, generation=1, progress=False, parts=tmp_path)
    assert len(played[-1]) == 6  # parts 0, 2 and 3
    assert "ignoring corrupt part" in caplog.text and first.name in caplog.text
    for name, array in whole.samples.items():
        assert np.array_equal(resumed.samples[name], array), name
    assert (resumed.games, resumed.simulations) == (whole.games, whole.simulations)


def test_saved_parts_of_other_params_or_weights_are_played_again(tmp_path, played):
    game, model, params = tiny(games=4, parallel_games=2)
    run_selfplay(game, model, params, generation=1, progress=False, parts=tmp_path)
    run_selfplay(game, model, params, generation=1, progress=False, parts=tmp_path)
    assert [len(games) for games in played] == [4]  # everything saved: nothing to play
    _, _, more_search = tiny(games=4, parallel_games=2, temperature_moves=1)
    run_selfplay(game, model, more_search, generation=1, progress=False, parts=tmp_path)
    with torch.no_grad():
        next(model.parameters()).add_(0.1)
    run_selfplay(game, model, params, generation=1, progress=False, parts=tmp_path)
    run_selfplay(game, model, params, generation=2, progress=False, parts=tmp_path)
    assert [len(games) for games in played] == [4, 4, 4, 4]


def test_a_log_file_gets_progress_lines_from_self_play_and_training(capsys):
    """Where stderr is not a terminal (`nohup dvc repro > run.log 2>&1`), bars become lines."""
    from pipeline.jobs.train import train_network

    game, model, params = tiny()
    result = run_selfplay(game, model, params, generation=1, progress=True)
    train_network(game, model, result.samples, params.train.model_copy(update={"epochs": 2}), seed=0, progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith("self-play gen 1") and "8/8" in line for line in lines), lines
    assert [line.split("  ")[0] for line in lines if line.startswith("train:")] == [
        "train: epoch 1/2",
        "train: epoch 2/2",
    ]
    assert not any("\r" in line for line in lines)


def test_replay_keeps_whole_planes_as_bytes_and_fractions_as_they_are():
    """Bytes where nothing is lost (a quarter of the memory); a fraction is never cut to 0."""
    from pipeline.jobs.selfplay import compact_planes

    whole = np.array([[0.0, 1.0], [3.0, 11.0]], dtype=np.float32)
    assert compact_planes(whole).dtype == np.uint8 and np.array_equal(compact_planes(whole), whole)
    fractions = np.array([[0.0, 1 / 3]], dtype=np.float32)
    assert compact_planes(fractions).dtype == np.float32 and np.array_equal(compact_planes(fractions), fractions)


def test_an_opponent_takes_its_seats_in_its_share_of_games_and_its_moves_are_not_trained_on(played):
    """`selfplay.opponent`: positions a weaker player makes, and outcomes against it, in the network's
    data, never the weaker player's own moves as targets."""
    game, model, params = tiny("tictacmo", games=24, opponent="random", opponent_share=0.5, opponent_seats=2)
    result = run_selfplay(game, model, params, generation=1, progress=False)
    records = played[-1]
    seatings = [record.seating for record in records]
    mixed = [s for s in seatings if "opponent" in s]
    assert 0 < len(mixed) < len(seatings) and all(s.count("opponent") == 2 for s in mixed)
    assert len({tuple(s) for s in mixed}) > 1  # the network's seat is drawn a game at a time
    own = sum(1 for record in records for mover in record.movers if record.seating[mover] == "selfplay")
    assert result.metrics["samples"] == own < sum(len(record.movers) for record in records)
    again = run_selfplay(game, model, params, generation=1, progress=False)
    assert [r.seating for r in played[-1]] == seatings
    assert np.array_equal(again.samples["states"], result.samples["states"])


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"opponent": "bogus"}, r"^selfplay.opponent: .*unknown player 'bogus'"),
        ({"opponent": "random", "opponent_seats": 3}, r"^selfplay.opponent_seats: 3, where tictacmo has 3 seats"),
    ],
)
def test_an_opponent_that_cannot_sit_is_one_line(setting, message):
    game, model, params = tiny("tictacmo", opponent_share=0.5, **setting)
    with pytest.raises(ConfigError, match=message):
        run_selfplay(game, model, params, generation=1, progress=False)
