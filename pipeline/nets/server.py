"""One inference server per accelerator: a process owns the networks and answers every search worker.

Why: sixteen workers that each open CUDA and send their own small batches kept an H200 5-8% busy
(issue 52). KataGo's neural-net server threads, Leela Chess Zero's multiplexing backend and
AlphaZero.jl's inference server do what this does: search runs in worker processes that never touch
the GPU, each worker writes its leaves' planes into a shared-memory block of its own and sends one
short message on a local socket; the server gathers whatever requests are waiting, evaluates them as
one batch per network and writes the answers back into each worker's block. Workers outnumber the
cores (`matches/workers.py`), so a core whose worker waits for an answer has another one to search.

Faults: a worker that dies closes its socket, and the server drops it and its block; a server that
dies closes every socket, and each waiting worker raises `InferenceServerError` (one line) at once.
"""

from __future__ import annotations

import multiprocessing
import os
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import astuple, dataclass
from multiprocessing import shared_memory
from multiprocessing.connection import Client, Connection, Listener, wait

import numpy as np

from pipeline.nets import InferenceServerError
from pipeline.plumbing.owners import exit_with_parent

START_TIMEOUT_S = 120.0  # building the networks (TorchScript freezing, CUDA start-up) before the first answer
WAIT_S = 0.05  # the server's longest sleep between looks at its sockets


@dataclass(frozen=True)
class ServedNetwork:
    """A network the server evaluates for the players named `key`: (shape fields, state dict), as an
    `AgentSpec` carries it, and the arithmetic it runs in."""

    key: str
    weights: tuple[dict, dict]
    precision: str = "float32"
    runtime: str = "auto"


@dataclass(frozen=True)
class ServerAddress:
    """What a worker needs to reach the server; it pickles into worker processes and Ray tasks."""

    path: str
    authkey: bytes


@dataclass
class ServerStats:
    """What the server did: requests answered, network calls (batches), positions, and the seconds it
    spent evaluating out of the seconds it served. Positions a call is the batch fill."""

    requests: int = 0
    calls: int = 0
    positions: int = 0
    busy_s: float = 0.0
    serving_s: float = 0.0

    @property
    def batch_fill(self) -> float:
        return self.positions / self.calls if self.calls else 0.0

    @property
    def busy_fraction(self) -> float:
        return self.busy_s / self.serving_s if self.serving_s else 0.0

    def figures(self) -> dict[str, float]:
        return {"server_batch_fill": self.batch_fill, "server_busy_fraction": self.busy_fraction}

    def __add__(self, other: ServerStats) -> ServerStats:
        """Several servers' work as one (a Ray cluster's nodes): busy seconds over serving seconds."""
        return ServerStats(*(mine + theirs for mine, theirs in zip(astuple(self), astuple(other))))


class _Block:
    """A worker's shared memory: `capacity` rows of planes, then `capacity` rows of answers (policy
    logits and the value vector side by side), all float32."""

    def __init__(self, memory: shared_memory.SharedMemory, capacity: int, plane_size: int, answer_size: int):
        self.memory, self.capacity = memory, capacity
        self.planes = np.ndarray((capacity, plane_size), np.float32, memory.buf)
        self.answers = np.ndarray((capacity, answer_size), np.float32, memory.buf, capacity * plane_size * 4)

    @staticmethod
    def nbytes(capacity: int, plane_size: int, answer_size: int) -> int:
        return capacity * (plane_size + answer_size) * 4

    def close(self) -> None:
        del self.planes, self.answers  # views on the buffer must go before it closes
        self.memory.close()


class _Network:
    """One served network, ready on the server's device, with its input and answer sizes."""

    def __init__(self, game, served: ServedNetwork, device: str):
        from pipeline.nets.network_evaluator import inference_network
        from pipeline.nets.senet import SENet

        model = SENet.from_weights(*served.weights)
        # on the CPU, its threads follow the cores the workers leave (pipeline/plumbing/threads.py)
        self.network = inference_network(model, game, served.precision, served.runtime, device)
        self.shape = tuple(game.observation_shape)

    def __call__(self, planes: np.ndarray) -> np.ndarray:
        logits, values = self.network(planes.reshape(len(planes), *self.shape))
        return np.concatenate([logits, values], axis=1)


class _Server:
    """The serving loop, in the server's own process."""

    def __init__(self, game, networks: list[ServedNetwork], listener: Listener, device: str):
        self.networks = {served.key: _Network(game, served, device) for served in networks}
        self.plane_size = int(np.prod(game.observation_shape))
        self.answer_size = game.num_actions + game.num_players
        self.listener = listener
        self.arrivals: list[Connection] = []  # accepted by the accepting thread, not yet watched
        self.lock = threading.Lock()
        self.clients: list[Connection] = []
        self.blocks: dict[Connection, _Block] = {}
        self.stats = ServerStats()

    def accept_forever(self) -> None:
        while True:
            try:
                conn = self.listener.accept()
            except OSError:  # the listener closed: the server is stopping
                return
            with self.lock:
                self.arrivals.append(conn)

    def serve(self) -> None:
        started = time.perf_counter()
        while True:
            with self.lock:
                self.clients += self.arrivals
                self.arrivals.clear()
            requests = []
            if not self.clients:
                time.sleep(WAIT_S)
            for conn in wait(self.clients, timeout=WAIT_S) if self.clients else []:
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    self.drop(conn)
                    continue
                if message[0] == "evaluate":
                    requests.append((conn, *message[1:]))
                elif message[0] == "stats":
                    self.stats.serving_s = time.perf_counter() - started
                    conn.send(self.stats)
                elif message[0] == "stop":
                    self.stats.serving_s = time.perf_counter() - started
                    conn.send(self.stats)
                    return
            if requests:
                self.answer(requests)

    def answer(self, requests: list[tuple]) -> None:
        """Every waiting request for a network in one call to it; each worker then gets its rows."""
        began = time.perf_counter()
        for key in dict.fromkeys(key for _, key, *_ in requests):
            mine = [(conn, self.block(conn, *where)) for conn, k, *where in requests if k == key]
            planes = np.concatenate([block.planes[:count] for _, (block, count) in mine])
            answers = self.networks[key](planes)
            self.stats.calls += 1
            self.stats.positions += len(planes)
            offset = 0
            for conn, (block, count) in mine:
                block.answers[:count] = answers[offset : offset + count]
                offset += count
                try:
                    conn.send("answered")
                except OSError:  # the worker died while its batch was evaluated
                    self.drop(conn)
        self.stats.requests += len(requests)
        self.stats.busy_s += time.perf_counter() - began

    def block(self, conn: Connection, name: str, capacity: int, count: int) -> tuple[_Block, int]:
        """The worker's block, attached again when the worker has grown it."""
        block = self.blocks.get(conn)
        if block is None or block.memory.name != name:
            if block is not None:
                block.close()
            block = self.blocks[conn] = _Block(
                shared_memory.SharedMemory(name), capacity, self.plane_size, self.answer_size
            )
        return block, count

    def drop(self, conn: Connection) -> None:
        """A worker gone: its block is unlinked here where it died before it could (a kill)."""
        self.clients.remove(conn)
        block = self.blocks.pop(conn, None)
        if block is not None:
            block.close()
            with suppress(FileNotFoundError):
                block.memory.unlink()
        conn.close()


def _serve(game_name: str, networks: list[ServedNetwork], address: ServerAddress, device: str, ready) -> None:
    """The server process's main: build the networks, say ready (or why not), serve until told to stop."""
    from pipeline.games import make_game

    exit_with_parent()
    try:
        listener = Listener(address.path, "AF_UNIX", authkey=address.authkey)
        server = _Server(make_game(game_name), networks, listener, device)
    except Exception as err:  # noqa: BLE001 - reported to the parent as its one line
        ready.send(f"{type(err).__name__}: {err}")
        return
    ready.send("ready")
    threading.Thread(target=server.accept_forever, daemon=True).start()
    try:
        server.serve()
    finally:
        listener.close()


class InferenceServer:
    """The parent's handle on a running server: its address for the workers, its figures, its stop."""

    def __init__(self, process: multiprocessing.Process, address: ServerAddress, folder: tempfile.TemporaryDirectory):
        self.process, self.address, self._folder = process, address, folder
        self._control = Client(address.path, "AF_UNIX", authkey=address.authkey)

    def stats(self) -> ServerStats:
        self._control.send(("stats",))
        return self._control.recv()

    def check_alive(self) -> None:
        if not self.process.is_alive():
            raise InferenceServerError(f"inference server stopped (exit status {self.process.exitcode})")

    def stop(self) -> ServerStats | None:
        """Stop the server; its figures, or None where it had died."""
        stats = None
        try:
            self._control.send(("stop",))
            stats = self._control.recv()
        except (EOFError, OSError):
            pass
        self._control.close()
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self._folder.cleanup()
        return stats


def start_server(game_name: str, networks: list[ServedNetwork], device: str) -> InferenceServer:
    """A server process for `networks` on `device` (auto | cpu | cuda), ready to answer."""
    folder = tempfile.TemporaryDirectory(prefix="alphazero-inference-")
    address = ServerAddress(os.path.join(folder.name, "socket"), secrets.token_bytes(16))
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe(duplex=False)
    process = context.Process(
        target=_serve, args=(game_name, networks, address, device, theirs), name="inference-server", daemon=True
    )
    process.start()
    theirs.close()
    if not ours.poll(START_TIMEOUT_S):
        process.kill()
        folder.cleanup()
        raise InferenceServerError(f"inference server: not ready after {START_TIMEOUT_S:.0f} s")
    try:
        said = ours.recv()
    except EOFError:
        process.join(10)
        said = f"its process exited with status {process.exitcode}"
    if said != "ready":
        process.join(10)
        folder.cleanup()
        raise InferenceServerError(f"inference server could not start: {said}")
    return InferenceServer(process, address, folder)


@contextmanager
def serving(
    game_name: str, networks: list[ServedNetwork], device: str, figures: dict | None = None
) -> Iterator[InferenceServer]:
    """A server for the block's duration; its figures (`ServerStats.figures`) into `figures` at the end."""
    server = start_server(game_name, networks, device)
    try:
        yield server
    finally:
        stats = server.stop()
        if stats is not None and figures is not None:
            figures.update(stats.figures())


class InferenceClient:
    """A worker's line to the server: its own shared-memory block, grown as its batches grow."""

    def __init__(self, address: ServerAddress):
        try:
            self.conn = Client(address.path, "AF_UNIX", authkey=address.authkey)
        except OSError as err:
            raise InferenceServerError(f"inference server unreachable at its socket: {err}") from None
        self.memory: shared_memory.SharedMemory | None = None
        self.block: _Block | None = None

    def evaluate(self, key: str, planes: np.ndarray, answer_size: int) -> np.ndarray:
        """The network `key`'s answers (policy logits, then values) for a batch of flattened planes."""
        count, plane_size = planes.shape
        if self.block is None or self.block.capacity < count:
            self._grow(max(count, 2 * (self.block.capacity if self.block else 0)), plane_size, answer_size)
        self.block.planes[:count] = planes
        try:
            self.conn.send(("evaluate", key, self.memory.name, self.block.capacity, count))
            self.conn.recv()
        except (EOFError, OSError):
            raise InferenceServerError("inference server stopped while a worker waited for its answer") from None
        return self.block.answers[:count].copy()

    def _grow(self, capacity: int, plane_size: int, answer_size: int) -> None:
        self._release()
        self.memory = shared_memory.SharedMemory(create=True, size=_Block.nbytes(capacity, plane_size, answer_size))
        self.block = _Block(self.memory, capacity, plane_size, answer_size)

    def _release(self) -> None:
        if self.block is not None:
            self.block.close()
            self.memory.unlink()
            self.block = self.memory = None

    def close(self) -> None:
        self._release()
        self.conn.close()


class ServedEvaluator:
    """Search's `Evaluator` for one served network: encode here, evaluate there. `client` gives the
    line to the server when first asked."""

    def __init__(self, game, client: Callable[[], InferenceClient], key: str):
        self.game, self.client, self.key = game, client, key

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        return self._ask(self.game.encode_batch(states))

    def judges_planes(self) -> bool:
        return True

    def evaluate_encoded(self, keys: list[bytes], encode: Callable) -> tuple[np.ndarray, np.ndarray]:
        return self._ask(encode(None))

    def _ask(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat = np.asarray(planes, dtype=np.float32).reshape(len(planes), -1)
        answers = self.client().evaluate(self.key, flat, self.game.num_actions + self.game.num_players)
        return answers[:, : self.game.num_actions], answers[:, self.game.num_actions :]


class _Line:
    """This worker process's line to the server: the address from the start, the connection from its
    first evaluation, so that a worker with no network to evaluate never connects."""

    address: ServerAddress | None = None
    client: InferenceClient | None = None

    @classmethod
    def open(cls) -> InferenceClient:
        if cls.client is None:
            cls.client = InferenceClient(cls.address)
        return cls.client


def connect(address: ServerAddress | None) -> None:
    """From now on this process's networks are the server's at `address` (None: its own again)."""
    if _Line.client is not None:
        _Line.client.close()
    _Line.address, _Line.client = address, None


def served_evaluator(game, key: str) -> ServedEvaluator | None:
    """The server's network `key` where this process is connected to a server; else None."""
    return ServedEvaluator(game, _Line.open, key) if _Line.address is not None else None
