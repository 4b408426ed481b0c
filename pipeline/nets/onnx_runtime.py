"""The network in ONNX Runtime, the CPU's fastest way to run it (`search.runtime`, auto on the CPU).

Why: search calls the network a few positions at a time, where TorchScript's per-op overhead dominates.
Measured on 2 cores, one thread (docs/results/onnx-runtime.md): ONNX Runtime's CPU provider answers
2.7-3.3x the positions/s of frozen TorchScript at batch 1 and 1.0-1.3x at batch 64, outputs equal
within 1e-6.

A network is exported once per weights and kept in a cache folder (`ALPHAZERO_ONNX_CACHE`, else
`$XDG_CACHE_HOME/alphazero-pipeline/onnx`), its file named by a key of the weights and the exporter and
ending in the file's own digest, so a damaged file is noticed and exported again, never played. A name
proves only that a file matches itself: another network's export under this key would match too, so a
cached file is also run on a probe and kept only where it answers as the weights do (`_answers_as`).
Exported with torch's TorchScript-based exporter: 0.05-0.1 s a network where the torch.export one
takes 1.5-2.5 s (every worker exports each generation's network) and needs onnxscript besides.

Running a graph needs no torch (`OnnxNetwork(graph)`): a pool's workers are given the graph their parent
exported and never import torch, which took 1.1-1.9 s of each worker's start (docs/results/speed-bench.md).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import stat
import threading
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipeline.plumbing.atomic import LEFTOVER, write_bytes
from pipeline.plumbing.threads import follow_free_cores

if TYPE_CHECKING:
    from pipeline.nets.senet import SENet

INPUT = "planes"
OUTPUTS = ("policy_logits", "values")
OPSET = 17
CACHE_ENV = "ALPHAZERO_ONNX_CACHE"
KEPT_FILES = 64  # exports kept in the cache folder, the most recently used; about 1 MB each
KEPT_SESSIONS = 8  # networks kept loaded per process, so evaluators of the same weights share one
LEFTOVER_AGE_S = 3600  # a temporary file this old is a killed export's: a write takes seconds at most
PROBE_BATCH = 4
# the runtimes agree within 1e-6 of the outputs' size on the champions; another network differs by far more
PROBE_TOLERANCE = {"rtol": 1e-3, "atol": 1e-4}

log = logging.getLogger(__name__)


def onnx_bytes(model: SENet, game) -> bytes:
    """`model` as an ONNX graph, its denormal weights zeroed (`denormals.py`): input `planes` (batch x
    the game's observation shape, float32), outputs `policy_logits` (batch x actions) and `values`
    (batch x players), the batch size free; its metadata names the game."""
    import torch

    from pipeline.nets.denormals import without_denormal_weights

    example = torch.zeros(2, *game.observation_shape)
    buffer = io.BytesIO()
    batch_free = {name: {0: "batch"} for name in (INPUT, *OUTPUTS)}
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter's notice that a newer one exists
        torch.onnx.export(
            without_denormal_weights(model).eval(),
            (example,),
            buffer,
            dynamo=False,
            input_names=[INPUT],
            output_names=list(OUTPUTS),
            dynamic_axes=batch_free,
            opset_version=OPSET,
        )
    return _with_metadata(buffer.getvalue(), game)


def _with_metadata(data: bytes, game) -> bytes:
    """The game the graph plays, so an exported file says what it is to whoever loads it."""
    import onnx

    graph = onnx.load_from_string(data)
    graph.doc_string = "AlphaZero SENet: planes in; policy logits over actions and one value per player out"
    facts = {"game": game.name, "players": game.num_players, "actions": game.num_actions}
    for key, value in facts.items():
        graph.metadata_props.add(key=key, value=str(value))
    return graph.SerializeToString()


def export_checkpoint(checkpoint: Path, target: Path, game_spec: str | None = None) -> tuple[SENet, object]:
    """Write `checkpoint`'s network as ONNX to `target` (atomically); return the network and its game
    (`game_spec`, else the one the file names: a caller that did not write the file vets it first)."""
    from pipeline.games import make_game
    from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint

    game = make_game(game_spec or checkpoint_game(checkpoint))
    model = load_checkpoint(checkpoint, game)
    write_bytes(target, onnx_bytes(model.eval(), game))
    return model, game


def cache_folder() -> Path:
    if folder := os.environ.get(CACHE_ENV):
        return Path(folder)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "alphazero-pipeline" / "onnx"


def export_key(model: SENet, game) -> str:
    """What the exported graph depends on: the weights (their digest, `checkpoint.weights_digest`), the
    network's shape, the game (its planes, and its name in the graph's metadata), the exporter and its
    opset; exported in float32 always."""
    import torch

    from pipeline.nets.checkpoint import weights_digest

    parts = (
        weights_digest(model.state_dict()),
        repr(model.shape),
        repr(game.observation_shape),
        game.name,
        torch.__version__,
        "float32",
    )
    return hashlib.sha256(f"{parts}|{OPSET}".encode()).hexdigest()[:32]


def cached_onnx(model: SENet, game, key: str | None = None) -> bytes:
    """The network's ONNX graph from the cache, exported and stored where it is missing, damaged or not
    these weights' (`_answers_as`); `key` is its `export_key` where the caller has it already (hashing
    the weights takes milliseconds)."""
    return _cached(model, game, key, threads=1)[0]


def _cached(model: SENet, game, key: str | None, threads: int) -> tuple[bytes, object | None]:
    """The graph, and where it came from the cache, the session of `threads` threads that verified it,
    for the caller to keep: verifying then costs the probe's two forward passes, no session more."""
    folder, key = cache_folder(), key or export_key(model, game)
    for path in folder.glob(f"{key}-*.onnx"):
        data = _read(path)
        if data is not None and hashlib.sha256(data).hexdigest()[:16] == path.stem.rsplit("-", 1)[1]:
            if session := _answers_as(model, game, data, threads):
                _touch(path)
                return data, session
            log.warning("%s: the cached ONNX export does not answer as its weights do; exported again", path)
        _remove(path)  # damaged, or another network's: exported again below
    data = onnx_bytes(model, game)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_bytes(folder / f"{key}-{hashlib.sha256(data).hexdigest()[:16]}.onnx", data)
        _prune(folder)
    except OSError:
        pass  # a read-only or full cache costs an export a process, nothing more
    return data, None


def _answers_as(model: SENet, game, data: bytes, threads: int):
    """A session of the graph `data` where it answers as `model` does on a fixed probe, else None.

    Why a probe and not a digest recorded beside the file: whoever can write another network's export
    into the cache can write its record too, and a record proves only that two files agree; the probe
    checks what matters, that the graph computes these weights' answers. Another network of the same
    shape differs by far more than the tolerance. It is cheap: the session is built anyway and kept by
    the caller, and two forward passes of a few positions take milliseconds (an export, 0.07-0.1 s).
    A graph crafted to answer as these weights on this probe alone would pass: the probe catches swaps
    and accidents, not an adversary who has the weights."""
    import torch

    planes = np.random.default_rng(0).integers(0, 2, (PROBE_BATCH, *game.observation_shape)).astype(np.float32)
    try:
        session = _new_session(data, threads)
        _flush_denormals()
        got = session.run(list(OUTPUTS), {INPUT: planes})
    except Exception:  # not a graph ONNX Runtime loads, or not one of these inputs and outputs
        return None
    training = model.training
    try:
        with torch.inference_mode():
            parameter = next(model.parameters())
            expected = model.eval()(torch.from_numpy(planes).to(parameter.device, parameter.dtype))
    finally:
        model.train(training)
    agree = all(
        answer.shape == tuple(want.shape) and np.allclose(answer, want.float().cpu().numpy(), **PROBE_TOLERANCE)
        for answer, want in zip(got, expected)
    )
    return session if agree else None


def _read(path: Path) -> bytes | None:
    """A cache entry's bytes; None for anything but a regular file (a named pipe would block the read
    for ever, a folder cannot be read) or one that cannot be read."""
    try:
        return path.read_bytes() if stat.S_ISREG(path.stat().st_mode) else None
    except OSError:
        return None


def _remove(path: Path) -> None:
    """A stale entry removed where it can be: in a read-only cache, or where a folder stands in its place,
    it stays, and costs an export a process, as a read-only cache does."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _touch(path: Path) -> None:
    try:
        path.touch()
    except OSError:
        pass


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile by another process's pruning
        return None


def _prune(folder: Path) -> None:
    """Keep the `KEPT_FILES` most recently used exports, and remove the temporary files of exports that
    were killed (`atomic.py` names them; one older than `LEFTOVER_AGE_S` has no live writer)."""
    exports = [(when, path) for path in folder.glob("*.onnx") if (when := _mtime(path)) is not None]
    for _, stale in sorted(exports, reverse=True)[KEPT_FILES:]:
        stale.unlink(missing_ok=True)
    now = time.time()
    for leftover in folder.glob(".*.onnx.*.tmp"):
        when = _mtime(leftover)
        if LEFTOVER.fullmatch(leftover.name) and when is not None and now - when > LEFTOVER_AGE_S:
            leftover.unlink(missing_ok=True)


_flushing = threading.local()  # `.on` in each thread whose arithmetic flushes denormals (`denormals.py`)
_first_session_built = False


def _new_session(graph: bytes, threads: int):
    """A session whose threads flush denormals. ONNX Runtime also sets the thread that builds a process's
    first session flushing (once a process: its `std::call_once`), which is where a worker searches."""
    import onnxruntime

    global _first_session_built
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its notices about unused initializers are noise
    options.add_session_config_entry("session.set_denormal_as_zero", "1")
    session = onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    if not _first_session_built:
        _flushing.on = _first_session_built = True
    return session


def _flush_denormals() -> None:
    """This thread's arithmetic flushes denormals: set by ONNX Runtime where this thread built the
    process's first session, else by torch (`denormals.py`), imported only then."""
    if not getattr(_flushing, "on", False):
        from pipeline.nets.denormals import flush_denormals

        flush_denormals()
        _flushing.on = True


class OnnxNetwork:
    """An exported network in ONNX Runtime's CPU provider: planes in, (logits, values) out, as numpy.

    Its threads follow the free cores as torch's do (pipeline/plumbing/threads.py): a session's thread count is
    fixed when it is built, so one session is kept per count the follower asks for. Built from a graph
    alone, it needs no torch (`of_model` exports one)."""

    def __init__(self, graph: bytes, sessions: dict[int, object] | None = None):
        self.graph = graph
        self._sessions: dict[int, object] = sessions or {}

    @classmethod
    def of_model(cls, model: SENet, game, key: str | None = None) -> OnnxNetwork:
        """`model`'s graph from the cache (`_cached`), with the session that verified it."""
        threads = follow_free_cores()
        graph, verified = _cached(model, game, key, threads)
        return cls(graph, {threads: verified} if verified else None)

    def _session(self, threads: int):
        if threads not in self._sessions:
            self._sessions[threads] = _new_session(self.graph, threads)
        return self._sessions[threads]

    def __call__(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        session = self._session(follow_free_cores())
        _flush_denormals()  # where its one thread is the caller's
        logits, values = session.run(list(OUTPUTS), {INPUT: np.ascontiguousarray(planes, dtype=np.float32)})
        return logits, values


_loaded: dict[str, OnnxNetwork] = {}


def onnx_network(model: SENet, game) -> OnnxNetwork:
    """The network's ONNX Runtime sessions, once per process for the same weights and game."""
    key = export_key(model, game)
    if key not in _loaded:
        if len(_loaded) >= KEPT_SESSIONS:
            _loaded.pop(next(iter(_loaded)))
        _loaded[key] = OnnxNetwork.of_model(model, game, key)
    return _loaded[key]
