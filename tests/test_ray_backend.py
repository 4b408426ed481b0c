"""The Ray backend on a real Ray cluster on 127.0.0.1 and on a local Ray: the same games as the process
pool, a worker killed mid-chunk loses and doubles nothing, no port open beyond loopback, an unreachable
cluster is one line."""

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from pipeline.config import parse_params
from pipeline.games import make_game
from pipeline.matches import BackendError
from pipeline.matches.workers import Workers
from pipeline.nets.senet import NetworkShape, SENet

if os.environ.get("CI"):  # CI installs the test extra, which has Ray: never skip there
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[ray]'")

from pipeline.jobs.selfplay import run_selfplay  # noqa: E402
from pipeline.matches.ray_backend import LOOPBACK_SWITCH  # noqa: E402

pytestmark = pytest.mark.slow  # `pytest -m 'not slow'`: the quick subset

TASK_TITLE = b"ray::_chunk_task"  # a Ray worker's process title while it runs a chunk


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def head_node(**head_env):
    """A head node with two CPUs on 127.0.0.1, every port on loopback (`ray_backend.LOOPBACK_SWITCH`:
    Ray 2.60 then refuses a second node, so the cluster has one), `head_env` in its environment. Its
    own temporary folder names its processes, so that the end stops them and no other Ray of the
    machine (`ray stop` stops all)."""
    port, folder = free_port(), tempfile.mkdtemp(prefix="ray-test-", dir="/tmp")  # short: Ray's socket paths
    start = ["ray", "start", "--head", "--node-ip-address=127.0.0.1", "--num-cpus=2", "--disable-usage-stats"]
    start += [f"--port={port}", "--include-dashboard=false", f"--temp-dir={folder}"]
    subprocess.run(start, env={**os.environ, **head_env}, check=True, capture_output=True)
    try:
        yield f"127.0.0.1:{port}", folder
    finally:
        ray.shutdown()
        stop_processes_of(folder)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    """The head node, and this driver, with Ray's token authentication off, as for a cluster started
    without a token (a token left in ~/.ray by an earlier local Ray would otherwise turn it on for the
    head alone)."""
    settings = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", LOOPBACK_SWITCH: "0"}
    saved = {key: os.environ.get(key) for key in settings}
    os.environ.update(settings)
    try:
        with head_node() as node:
            yield node
    finally:
        for key, value in saved.items():
            os.environ.pop(key) if value is None else os.environ.update({key: value})


def ray_processes(folder: str | None = None) -> list:
    """This process (a Ray driver opens ports too) and the Ray processes: those whose command line names
    `folder`, or this process's children, with their own children."""
    import psutil

    me = psutil.Process()
    roots = [me] + (me.children() if folder is None else [])
    if folder is not None:
        roots += [
            p for p in psutil.process_iter(["cmdline"]) if any(folder in part for part in p.info["cmdline"] or [])
        ]
    found = {}
    for root in roots:
        with contextlib.suppress(psutil.NoSuchProcess):
            for process in [root, *root.children(recursive=True)]:
                found[process.pid] = process
    return list(found.values())


def listening_off_loopback(processes: list) -> list[str]:
    import psutil

    pids = {p.pid for p in processes}
    loopback = ("127.0.0.1", "::1", "::ffff:127.0.0.1")
    return [
        f"pid {c.pid} listens on {c.laddr.ip}:{c.laddr.port}"
        for c in psutil.net_connections(kind="inet")
        if c.pid in pids and c.status == psutil.CONN_LISTEN and c.laddr.ip not in loopback
    ]


def stop_processes_of(folder: str) -> None:
    """Kill the Ray processes whose command line names `folder` (the cluster's session files), and
    their children (agents and workers retitle themselves `ray::...`)."""
    import psutil

    mine = []
    for process in psutil.process_iter(["cmdline"]):
        if any(folder in part for part in process.info["cmdline"] or []):
            with contextlib.suppress(psutil.NoSuchProcess):
                mine += [process, *process.children(recursive=True)]
    for process in mine:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(mine, timeout=30)


def tiny(workers: Workers):
    params = parse_params(
        {
            "game": "tictacmo",
            "workers": workers.count,
            "backend": {
                "kind": workers.backend,
                "ray_address": workers.ray_address,
                "inference_server": workers.inference_server,
            },
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "search": {"simulations": 24},
            "selfplay": {"games": 16, "parallel_games": 4},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )
    game = make_game("tictacmo")
    torch.manual_seed(0)
    return game, SENet(NetworkShape.for_game(game, **params.network.model_dump())), params


def selfplay(workers: Workers):
    game, model, params = tiny(workers)
    result = run_selfplay(game, model, params, generation=1, progress=False)
    assert result.games == 16
    return result


def selfplay_samples(workers: Workers) -> dict[str, np.ndarray]:
    return selfplay(workers).samples


def assert_same_samples(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def chunk_worker_pids(folder: str) -> list[int]:
    """The workers running a chunk in the cluster of `folder`: never another Ray's on this machine."""
    pids = []
    for process in ray_processes(folder):
        try:
            if (Path("/proc") / str(process.pid) / "cmdline").read_bytes().startswith(TASK_TITLE):
                pids.append(process.pid)
        except OSError:
            pass  # the process ended while we looked
    return pids


def test_ray_plays_the_same_games_as_the_pool_and_listens_on_loopback_only(cluster):
    address, folder = cluster
    pool = selfplay_samples(Workers(2))
    on_ray = selfplay_samples(Workers(2, "ray", address))
    assert_same_samples(pool, on_ray)
    assert [n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]] == ["127.0.0.1"]
    processes = ray_processes(folder)
    assert len(processes) > 3  # the driver, GCS, raylet, workers: the test looked at Ray's processes
    assert listening_off_loopback(processes) == []


def test_a_local_ray_started_by_a_stage_listens_on_loopback_only():
    ray.shutdown()
    try:
        on_ray = selfplay_samples(Workers(2, "ray", None))  # as a stage with `ray_address: null`
        processes = ray_processes()
        assert len(processes) > 3
        assert listening_off_loopback(processes) == []
        assert_same_samples(selfplay_samples(Workers(2)), on_ray)
    finally:
        ray.shutdown()


def test_a_worker_killed_mid_chunk_loses_and_doubles_nothing(cluster):
    expected = selfplay_samples(Workers(4))
    killed, outcome = [], {}

    def run():
        outcome["samples"] = selfplay_samples(Workers(4, "ray", cluster[0]))

    player = threading.Thread(target=run)
    player.start()
    while player.is_alive() and not killed:
        for pid in chunk_worker_pids(cluster[1]):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            break
        time.sleep(0.02)
    player.join()
    assert killed, "no chunk was caught running: the test did not kill anything"
    assert_same_samples(expected, outcome["samples"])


def test_a_nodes_inference_server_serves_its_tasks_the_same_games(cluster):
    """The GPU actor's code path (`ray_backend._NodeServer`) on the CPU: the node's tasks send their
    positions to it and play the pool's games."""
    served = selfplay(Workers(2, "ray", cluster[0], inference_server="on"))
    assert_same_samples(selfplay_samples(Workers(2)), served.samples)
    assert served.served["server_batch_fill"] >= 1 and 0 < served.served["server_busy_fraction"] <= 1


def test_an_unreachable_cluster_is_one_line():
    ray.shutdown()
    _, model, params = tiny(Workers(2, "ray", f"127.0.0.1:{free_port()}"))
    with pytest.raises(BackendError, match=r"^backend.ray_address: cannot reach a Ray cluster at '127.0.0.1:\d+'"):
        run_selfplay(make_game("tictacmo"), model, params, generation=1, progress=False)


def test_a_cluster_that_asks_for_a_token_is_one_line_that_says_so(cluster):
    """A driver without the cluster's token: Ray's core retries for 20 s and then names only a failed
    connection; the one line names the token and the setting."""
    ray.shutdown()
    with head_node(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32)) as (address, _):
        _, model, params = tiny(Workers(2, "ray", address))
        with pytest.raises(
            BackendError, match=r"cluster at '127.0.0.1:\d+': the cluster asks for a token .*RAY_AUTH_MODE"
        ):
            run_selfplay(make_game("tictacmo"), model, params, generation=1, progress=False)
