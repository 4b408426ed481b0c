"""Chunks of games as Ray tasks, so self-play, gating, evaluation and the sweep's panel games spread
over a cluster of machines. An optional extra: `pip install -e '.[ray]'`.

Each chunk is one task with the seeds the process pool would give it, so both backends play the same
games. A task whose worker or node dies is run again from its start (Ray's `max_retries`) and its one
result is taken, so no game is lost or counted twice. The agents (network weights included) go to the
object store once per call, and each worker process builds them once, not once per chunk.

The driver ships this package's code with the tasks (`runtime_env` `py_modules`), so the nodes need
the project's dependencies but not the project itself, and always run the driver's version of it.
"""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

import ray
from ray._private import ray_constants
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

import pipeline
from pipeline.matches import BackendError
from pipeline.matches.chunks import init_worker, play_chunk
from pipeline.nets.server import ServerStats, start_server

RETRIES = 3  # runs of a chunk after its worker died (a system failure), before the stage fails


def connect(address: str | None) -> None:
    """Join the cluster at `address` (None: start a local Ray; "auto": the one this machine joined),
    once per process."""
    if ray.is_initialized():
        return
    if address not in (None, "auto"):
        _check_listening(address)  # Ray itself retries a dead address for minutes
        _check_token(address)  # and a cluster that refuses it for 20 s, then names neither
    if _on_this_machine(address):
        _loopback_only()
    package = str(Path(pipeline.__file__).parent)
    local = {"include_dashboard": False} if address is None else {}
    try:
        ray.init(
            address=address,
            runtime_env={"py_modules": [package], "excludes": ["__pycache__"]},
            log_to_driver=False,
            configure_logging=False,
            **local,
        )
    except Exception as err:  # Ray raises ConnectionError, RuntimeError or its own errors here
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise _unreachable(address, reason) from None


LOOPBACK = ("127.0.0.1", "localhost")
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # Ray's name for it; "0": a one-node, loopback-only Ray


def _on_this_machine(address: str | None) -> bool:
    """A local Ray this process starts, or a cluster that listens on this machine's loopback."""
    return address is None or address.removeprefix("ray://").rpartition(":")[0] in LOOPBACK


def _loopback_only() -> None:
    """Bind every port of the local Ray to 127.0.0.1. Ray binds its GCS, raylet, agent and worker ports
    to loopback only when the node's address is a localhost one, but on Linux it replaces 127.0.0.1 by
    the host's address unless this switch (read when Ray is imported, so set in both places) is off;
    anyone reaching an open Ray port can run code. The processes Ray starts inherit the variable."""
    os.environ[LOOPBACK_SWITCH] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False


def _check_listening(address: str) -> None:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except (OSError, ValueError) as err:
        reason = "expected host:port or ray://host:port" if isinstance(err, ValueError) else "nothing answers there"
        raise _unreachable(address, reason) from None


def _check_token(address: str) -> None:
    """A cluster started with token authentication (`RAY_AUTH_MODE=token`) refuses a driver without its
    token: ask its GCS once (Ray's client sends this driver's token, if any) and say so in a line."""
    refused = getattr(ray.exceptions, "AuthenticationError", None)  # a Ray without token authentication: none
    if refused is None or address.startswith("ray://"):  # Ray Client's server is not the GCS
        return
    try:
        from ray._raylet import GcsClient

        GcsClient(address=address).internal_kv_exists(b"alphazero-probe", namespace=None, timeout=5)
    except refused:
        if os.environ.get("RAY_AUTH_MODE") == "token":
            reason = (
                "the cluster refuses this driver's token: give it the cluster's (RAY_AUTH_TOKEN or ~/.ray/auth_token)"
            )
        else:
            reason = (
                "the cluster asks for a token (it was started with RAY_AUTH_MODE=token): set RAY_AUTH_MODE=token"
                " here too, with the cluster's token in RAY_AUTH_TOKEN or ~/.ray/auth_token"
            )
        raise _unreachable(address, reason) from None
    except Exception:  # anything else is ray.init's to say, with its own words
        return


def _unreachable(address: str, reason: str) -> BackendError:
    return BackendError(f"backend.ray_address: cannot reach a Ray cluster at {address!r}: {reason}")


def cluster_cpus(address: str | None) -> int:
    connect(address)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def run_chunks(workers, game_name: str, specs: list, jobs: list[tuple], served: dict):
    """Each chunk's result, in the order of `jobs`, as `chunks.play_chunk` returns it; with inference
    servers (one per node, `_NodeServer`), their figures summed into `served`."""
    connect(workers.ray_address)
    key = uuid.uuid4().hex  # names this call's agents in the workers' one-entry cache
    networks = [spec.served() for spec in specs if spec.network]
    servers = _start_node_servers(game_name, networks, workers) if networks else {}
    if servers:  # a task on a node without a server plays its networks on the CPU: served tasks never open the GPU
        specs = [spec.on_device("cpu") for spec in specs]
    agents = [ray.put(specs)]  # in a list, so a task resolves it only when its worker lacks the agents
    addresses = {node: ray.get(server.address.remote()) for node, server in servers.items()}
    refs = [_chunk_task.remote(key, game_name, agents, addresses, *job) for job in jobs]
    try:
        for ref in refs:
            yield ray.get(ref)
    finally:  # a stage stopped midway leaves no tasks running on the cluster
        _, pending = ray.wait(refs, num_returns=len(refs), timeout=0)
        for ref in pending:
            ray.cancel(ref, force=True)
        _stop_node_servers(servers, served)


def _served_nodes(workers) -> list[dict]:
    """The alive nodes that get an inference server: every node with `inference_server: on`; with
    auto, the nodes with a GPU (unless `device: cpu`)."""
    nodes = [node for node in ray.nodes() if node["Alive"]]
    if workers.inference_server == "on":
        return nodes
    if workers.inference_server == "off" or workers.device == "cpu":
        return []
    return [node for node in nodes if node["Resources"].get("GPU", 0) > 0]


def _start_node_servers(game_name: str, networks: list, workers) -> dict:
    """One `_NodeServer` actor on each served node, holding that node's GPU where it has one."""
    servers = {}
    for node in _served_nodes(workers):
        gpus = 1 if node["Resources"].get("GPU", 0) > 0 and workers.device != "cpu" else 0
        placement = NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
        actor = _NodeServer.options(num_gpus=gpus, scheduling_strategy=placement)
        servers[node["NodeID"]] = actor.remote(game_name, networks, workers.device)
    return servers


def _stop_node_servers(servers: dict, served: dict) -> None:
    """Stop each node's server; their figures, taken together, into `served`."""
    stats = [stat for stat in ray.get([server.stop.remote() for server in servers.values()]) if stat]
    for server in servers.values():
        ray.kill(server)
    if stats:
        served.update(sum(stats, ServerStats()).figures())


@ray.remote(num_cpus=0)
class _NodeServer:
    """A node's inference server (`nets/server.py`), started by this actor on the actor's node (and
    GPU): the node's chunk tasks reach it through its local socket."""

    def __init__(self, game_name: str, networks: list, device: str):
        self.server = start_server(game_name, networks, device)

    def address(self):
        return self.server.address

    def stop(self):
        return self.server.stop()


_built_key: list[str] = [""]


@ray.remote(num_cpus=1, max_retries=RETRIES)
def _chunk_task(key: str, game_name: str, agents: list, servers: dict, *job):
    """One chunk in a Ray worker, with one torch thread (the task holds one CPU), its networks
    evaluated by its node's inference server where `servers` names one."""
    if _built_key[0] != key:
        server = servers.get(ray.get_runtime_context().get_node_id())
        init_worker(game_name, ray.get(agents[0]), threads=1, server=server)
        _built_key[0] = key
    return play_chunk(*job)
