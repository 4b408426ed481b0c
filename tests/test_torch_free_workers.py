"""A pool's workers run their networks in ONNX Runtime from the graph their parent exported
(`AgentSpec.for_pool`) and never import torch, which took 1.1-1.9 s of each worker's start: they play the
games a worker with torch plays, their arithmetic flushes denormals as torch's flush made it, and the
stage modules, which every spawned worker imports again, load no torch."""

import dataclasses
import pickle
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

from pipeline.agents.recipes import selfplay_player
from pipeline.agents.search_agent import PlayConfig
from pipeline.agents.spec import AgentSpec
from pipeline.games import make_game
from pipeline.jobs.throughput import selfplay_params
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.search import SearchConfig

WORKER = textwrap.dedent(
    """
    import pickle, sys
    import numpy as np
    specs, game_name, job = pickle.loads(sys.stdin.buffer.read())
    from pipeline.matches.chunks import init_worker, play_chunk
    init_worker(game_name, specs, 1)
    records, stats, sims, span = play_chunk(*job)
    flushed = bool(np.float32(1e-39) * np.float32(1.0) == 0)  # a denormal operand read as zero
    sys.stdout.buffer.write(pickle.dumps(([r.actions for r in records], sims, flushed, "torch" in sys.modules)))
    """
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ALPHAZERO_ONNX_CACHE", str(tmp_path / "onnx"))


def in_a_worker(specs: list[AgentSpec], game_name: str, games: int) -> tuple:
    """One chunk of `games` self-play games in a fresh Python process, as a pool's worker plays it."""
    job = ([[0] * make_game(game_name).num_players] * games, 7, 0, games, False, None)
    done = subprocess.run(
        [sys.executable, "-c", WORKER], input=pickle.dumps((specs, game_name, job)), capture_output=True, check=True
    )
    return pickle.loads(done.stdout)


@pytest.mark.parametrize("game_name", ["tictacmo", "kingdomino(players=4,fit=1)"])
def test_a_pool_worker_plays_the_same_games_without_torch(game_name, cache):
    game = make_game(game_name)
    torch.manual_seed(0)
    model = SENet(NetworkShape.for_game(game, 1, 8, 4)).eval()
    spec = dataclasses.replace(selfplay_player(model, selfplay_params(game_name, 4, 4)), play=PlayConfig(12, True))
    pooled = spec.for_pool(game)
    assert pooled.graph is not None and spec.graph is None
    actions, sims, flushed, loaded_torch = in_a_worker([pooled], game_name, 3)
    expected_actions, expected_sims, _, torch_before = in_a_worker([spec], game_name, 3)
    assert not loaded_torch and torch_before  # the spec without its graph builds the network with torch
    assert flushed  # ONNX Runtime set the worker's own thread, where its one thread computes
    assert actions == expected_actions and sims == expected_sims and sum(sims.values()) > 0


def test_only_networks_run_in_onnx_runtime_get_their_graph(cache):
    game = make_game("tictactoe")
    model = SENet(NetworkShape.for_game(game, 1, 8, 4)).eval()
    play = selfplay_player(model, selfplay_params("tictactoe", 2, 2)).play
    on_torch = AgentSpec.alphazero("a", model, play, SearchConfig(runtime="torch"))
    assert on_torch.for_pool(game).graph is None
    uct = AgentSpec.uct("u", 10, 1.4, seed=0)
    assert uct.for_pool(game) is uct
    pooled = AgentSpec.alphazero("a", model, play, SearchConfig()).for_pool(game)
    assert pooled.graph is not None and pooled.on_device("cpu").graph is None  # a move re-decides the runtime


def test_a_specs_weights_are_a_copy_that_unpickles_without_torch():
    game = make_game("tictactoe")
    model = SENet(NetworkShape.for_game(game, 1, 8, 4)).eval()
    spec = AgentSpec.greedy("g", model, 0.0, SearchConfig())
    assert all(isinstance(value, np.ndarray) for value in spec.network[1].values())
    with torch.no_grad():
        model.stem.weight.add_(1.0)  # training goes on in the caller's model
    assert not np.allclose(spec.network[1]["stem.weight"], model.stem.weight.detach().numpy())
    script = "import pickle, sys; pickle.loads(sys.stdin.buffer.read()); print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(spec), capture_output=True, check=True)
    assert done.stdout.strip() == b"False"


def test_the_stage_modules_a_worker_imports_load_no_torch():
    script = "import sys, stages.init, stages.selfplay, stages.gate, stages.evaluate; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_worker_warms_up_once_before_its_first_chunks_clock_and_plays_the_same_games(monkeypatch, cache):
    """`chunks._warm_up`: a process's first chunk loads its players' kernels and network before its span
    starts, the next chunk does not again, and the games are those played without a warm-up."""
    from pipeline.agents.search_agent import SearchAgent
    from pipeline.matches.chunks import init_worker, play_chunk

    game_name = "kingdomino(players=4,fit=1)"
    game = make_game(game_name)
    torch.manual_seed(0)
    model = SENet(NetworkShape.for_game(game, 1, 8, 4)).eval()
    spec = dataclasses.replace(selfplay_player(model, selfplay_params(game_name, 2, 2)), play=PlayConfig(12, True))
    job = ([[0] * game.num_players] * 2, 7, 0, 2, False, None)
    warmed_at, warm_up = [], SearchAgent.warm_up

    def timed_warm_up(agent):
        warm_up(agent)
        warmed_at.append(time.time())

    monkeypatch.setattr(SearchAgent, "warm_up", timed_warm_up)
    init_worker(game_name, [spec], None)
    chunks = [play_chunk(*job) for _ in range(2)]
    assert len(warmed_at) == 1 and warmed_at[0] <= chunks[0][3][0]
    monkeypatch.setattr(SearchAgent, "warm_up", lambda agent: warmed_at.append(None))
    init_worker(game_name, [spec], None)  # a new match set: warms up again, here not at all
    cold = play_chunk(*job)
    assert len(warmed_at) == 2
    assert [r.actions for r in chunks[0][0]] == [r.actions for r in chunks[1][0]] == [r.actions for r in cold[0]]
