"""The inference server (`pipeline/nets/server.py`) on the CPU, where CI runs: its answers are the
network's, served workers play the games one process plays, and both fault cases end as the issue
asks (a killed worker's chunks played again; a dead server one line, no hang)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest
import torch

from pipeline.agents.search_agent import PlayConfig
from pipeline.agents.spec import AgentSpec
from pipeline.games import make_game
from pipeline.matches.workers import Workers, match_workers, play_match
from pipeline.nets import InferenceServerError
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.nets.server import InferenceClient, ServedEvaluator, serving
from pipeline.search import SearchConfig

GAME = "tictactoe"


def small_network(seed: int = 0) -> SENet:
    torch.manual_seed(seed)
    return SENet(NetworkShape.for_game(make_game(GAME), 1, 8, 2)).eval()


def positions(game, count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    states, state = [], game.initial_state()
    while len(states) < count:
        states.append(state)
        state = (
            game.initial_state()
            if game.is_terminal(state)
            else game.step(state, int(rng.choice(game.legal_actions(state))))[0]
        )
    return states


def selfplay_spec(simulations: int = 16) -> AgentSpec:
    return AgentSpec.alphazero("az", small_network(), PlayConfig(simulations=simulations), SearchConfig())


def test_served_answers_equal_a_direct_network_call_whatever_the_batch():
    game = make_game(GAME)
    spec = selfplay_spec()
    states = positions(game, 70)
    expected = NetworkEvaluator(game, small_network()).evaluate(states)
    with serving(GAME, [spec.served()], "cpu") as server:
        client = InferenceClient(server.address)
        served = ServedEvaluator(game, lambda: client, "az")
        for batch in (states[:3], states, states[5:9]):  # the worker's block grows, then is reused
            logits, values = served.evaluate(batch)
            first = states.index(batch[0])
            np.testing.assert_allclose(logits, expected[0][first : first + len(batch)], atol=1e-5)
            np.testing.assert_allclose(values, expected[1][first : first + len(batch)], atol=1e-5)
        stats = server.stats()
        client.close()
    assert (stats.requests, stats.calls, stats.positions) == (3, 3, 3 + 70 + 4)
    assert 0 < stats.busy_fraction <= 1


def test_served_workers_play_the_games_one_process_plays():
    spec = selfplay_spec()
    seatings = [[0, 0]] * 12
    alone = play_match(GAME, [spec], seatings, seed=5, parallel=4, workers=1)
    served = play_match(GAME, [spec], seatings, 5, 4, Workers(2, inference_server="on", device="cpu"))
    assert [r.actions for r in served.records] == [r.actions for r in alone.records]
    assert served.served["server_batch_fill"] >= 1 and 0 < served.served["server_busy_fraction"] <= 1
    assert alone.served == {}


def test_a_served_pool_runs_two_workers_a_core():
    assert match_workers(Workers(0, inference_server="on"), 1000) == 2 * os.cpu_count()
    assert match_workers(Workers(0, inference_server="off"), 1000) == os.cpu_count()
    assert match_workers(Workers(3, inference_server="on"), 1000) == 3  # a count asked for stays


def _kill_a_worker_once_it_plays(killed: list) -> None:
    """Kill one pool worker (not the server) once the pool is up and the server has answered."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not killed:
        workers = [p for p in multiprocessing.active_children() if p.name != "inference-server"]
        if len(workers) >= 2:
            time.sleep(1.5)  # let it start searching: a chunk in flight is lost with it
            os.kill(workers[0].pid, signal.SIGKILL)
            killed.append(workers[0].pid)
        time.sleep(0.05)


def test_a_killed_worker_costs_only_chunks_in_flight_which_are_played_again():
    spec = selfplay_spec(simulations=40)
    seatings = [[0, 0]] * 8
    alone = play_match(GAME, [spec], seatings, seed=3, parallel=1, workers=1)
    killed: list[int] = []
    killer = threading.Thread(target=_kill_a_worker_once_it_plays, args=(killed,))
    killer.start()
    served = play_match(GAME, [spec], seatings, 3, 1, Workers(2, inference_server="on", device="cpu"))
    killer.join()
    assert killed and served.served["retried_chunks"] >= 1
    assert [r.actions for r in served.records] == [r.actions for r in alone.records]


def test_a_dead_server_stops_its_waiting_worker_with_one_line():
    game = make_game(GAME)
    spec = selfplay_spec()
    with serving(GAME, [spec.served()], "cpu") as server:
        client = InferenceClient(server.address)
        served = ServedEvaluator(game, lambda: client, "az")
        served.evaluate(positions(game, 4))
        server.process.kill()
        server.process.join()
        with pytest.raises(InferenceServerError, match="^inference server stopped while a worker waited"):
            served.evaluate(positions(game, 4))
        client.close()


def _kill_the_server_once_workers_wait(killed: list) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not killed:
        children = multiprocessing.active_children()
        servers = [p for p in children if p.name == "inference-server"]
        if servers and len(children) >= 3:
            time.sleep(1.5)
            os.kill(servers[0].pid, signal.SIGKILL)
            killed.append(servers[0].pid)
        time.sleep(0.05)


def test_a_server_killed_mid_match_stops_the_match_with_one_line():
    spec = selfplay_spec(simulations=400)
    killed: list[int] = []
    killer = threading.Thread(target=_kill_the_server_once_workers_wait, args=(killed,))
    killer.start()
    with pytest.raises(InferenceServerError, match="^inference server (stopped|unreachable)"):
        play_match(GAME, [spec], [[0, 0]] * 8, 3, 1, Workers(2, inference_server="on", device="cpu"))
    killer.join()
    assert killed
