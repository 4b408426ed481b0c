"""The network behind search's `Evaluator` seam: encode a batch, one forward pass, numpy out, on the
CPU or a GPU (`device` in params.yaml: auto takes a GPU when torch sees one).

On the CPU in float32 the network runs in ONNX Runtime (`runtime` auto, `onnx_runtime.py`): 2.7-3.3x
TorchScript's positions/s at batch 1, where timed moves call it, and 1.0-1.3x at self-play's batch 64.
Elsewhere it is traced and frozen with TorchScript: 15-20% more positions/s than eager torch for the
small batches self-play feeds it (docs/results/speed-bench.md), same outputs. With `precision`
bfloat16 it runs in bf16: 1.5-2.5x the positions/s where the CPU has AVX-512 BF16 or AMX
(docs/results/precision.md, "bf16 inference"), outputs within a few hundredths of float32's. Elsewhere
torch emulates bf16 at a sixteenth of float32's speed, so `runtime` auto searches in float32 there and
says so once (`search_precision`); `runtime: torch` keeps the emulation. With `int8` it runs
quantized on an x86 CPU (`int8.py`): 1.3-1.6x bf16's self-play simulations/s here.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from pipeline.config import ConfigError, Device
from pipeline.nets.onnx_runtime import OnnxNetwork, onnx_network
from pipeline.nets.shape import NetworkShape, constant_planes
from pipeline.plumbing.threads import follow_free_cores

if TYPE_CHECKING:
    import torch

    from pipeline.nets.senet import SENet

RUNTIMES = ("auto", "torch", "onnxruntime")
PRECISIONS = {"float32": "float32", "bfloat16": "bfloat16", "int8": "float32"}  # precision: torch's input dtype

Network = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]  # planes in, (logits, values) out


def inference_device(precision: str = "float32", device: Device = "auto") -> torch.device:
    """Where a network of this `precision` runs for the params' `device` (auto, cpu or cuda, checked by
    the schema): int8 on the CPU (with device auto, whatever GPU there is)."""
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda, but torch sees no GPU here (use auto or cpu)")
    if precision == "int8":
        if device == "cuda":
            raise ConfigError("search.precision: int8 runs on the CPU only; use bfloat16 with device: cuda")
        return torch.device("cpu")
    return torch.device("cuda" if device != "cpu" and torch.cuda.is_available() else "cpu")


def native_bfloat16() -> bool:
    """Whether this CPU has bf16 arithmetic (AVX-512 BF16 or AMX). torch tells only through private
    probes; a torch without them is taken to have none."""
    import torch

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(getattr(torch.cpu, probe, lambda: False)() for probe in probes)


def search_precision(precision: str = "float32", runtime: str = "auto", device: Device = "auto") -> str:
    """The precision search runs in: bfloat16 under `runtime` auto on a CPU without bf16 arithmetic is
    float32, which is 16x faster there (the Connect-4 champion's 100-simulation games on an AVX2 EPYC),
    not slower, as the shipped Connect-4 params' bfloat16 would be."""
    if precision != "bfloat16" or runtime != "auto" or inference_device(precision, device).type != "cpu":
        return precision
    if native_bfloat16():
        return precision
    _say_emulated_bfloat16()
    return "float32"


@cache
def _say_emulated_bfloat16() -> None:
    print("search.precision: bfloat16, but this CPU has no bf16 arithmetic: searching in float32", file=sys.stderr)


def inference_runtime(precision: str = "float32", runtime: str = "auto", device: Device = "auto") -> str:
    """torch or onnxruntime: auto takes ONNX Runtime for float32 on the CPU, torch elsewhere (a GPU,
    bfloat16, int8), where ONNX Runtime's CPU provider has no faster kernels or none at all."""
    if runtime not in RUNTIMES:
        raise ConfigError(f"search.runtime: expected one of {', '.join(RUNTIMES)}, got {runtime!r}")
    precision = search_precision(precision, runtime, device)
    on_cpu_float32 = inference_device(precision, device).type == "cpu" and precision == "float32"
    if runtime == "onnxruntime" and not on_cpu_float32:
        raise ConfigError("search.runtime: onnxruntime runs float32 on the CPU; use torch or auto here")
    return "onnxruntime" if runtime == "onnxruntime" or (runtime == "auto" and on_cpu_float32) else "torch"


def frozen_for_inference(model: SENet, game, device: torch.device | None = None, precision: str = "float32"):
    """`model` traced and frozen for search, its denormal weights zeroed (`denormals.py`); the caller's
    model stays as it is."""
    import torch

    from pipeline.nets.denormals import without_denormal_weights

    device, dtype = device or torch.device("cpu"), getattr(torch, PRECISIONS[precision])
    model = without_denormal_weights(model)
    if precision == "int8":
        from pipeline.nets.int8 import quantized_for_inference

        return quantized_for_inference(model, game)  # on the CPU: see inference_device
    if device.type != "cpu" or dtype != torch.float32:
        model = model.to(device, dtype)
    example = torch.zeros(2, *game.observation_shape, device=device, dtype=dtype)
    with torch.inference_mode():
        return torch.jit.freeze(torch.jit.trace(model.eval(), example, check_trace=False))


class TorchNetwork:
    """The network traced and frozen with TorchScript on its device: planes in, numpy out."""

    def __init__(self, model: SENet, game, precision: str = "float32", device: Device = "auto"):
        import torch

        self.device, self.dtype = inference_device(precision, device), getattr(torch, PRECISIONS[precision])
        self.model = frozen_for_inference(model, game, self.device, precision)

    def __call__(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import torch

        from pipeline.nets.denormals import flush_denormals

        follow_free_cores()
        flush_denormals()
        with torch.inference_mode():
            logits, values = self.model(torch.from_numpy(planes).to(self.device, self.dtype))
        return logits.float().cpu().numpy(), values.float().cpu().numpy()


def inference_network(
    model: SENet, game, precision: str = "float32", runtime: str = "auto", device: Device = "auto"
) -> Network:
    """`model` ready for search on `device` in the runtime `runtime` resolves to (`inference_runtime`,
    which runs an emulated bfloat16 in float32 under auto: `search_precision`)."""
    if inference_runtime(precision, runtime, device) == "onnxruntime":
        return onnx_network(model, game)
    return TorchNetwork(model, game, precision, device)


class NetworkEvaluator:
    """A network judging positions for search; `device` is the params' (`SearchConfig.device`), passed
    with each player, so that no process-wide setting decides where a player's network runs."""

    def __init__(self, game, model: SENet, precision: str = "float32", runtime: str = "auto", device: Device = "auto"):
        self._judge(game, inference_network(model, game, precision, runtime, device), model.shape)

    @classmethod
    def of_graph(cls, game, graph: bytes, shape: NetworkShape) -> NetworkEvaluator:
        """The network of shape `shape` exported as the ONNX graph `graph` (`onnx_runtime.onnx_bytes`),
        run in ONNX Runtime without torch: how a pool's worker plays (`AgentSpec.for_pool`)."""
        evaluator = cls.__new__(cls)
        evaluator._judge(game, OnnxNetwork(graph), shape)
        return evaluator

    def _judge(self, game, network: Network, shape: NetworkShape) -> None:
        self.game, self.network = game, network
        # its stem reads the game's constant planes at one cell (`senet.py`), all of them and no other
        self.constant_vector = 0 < shape.constant_planes == constant_planes(game)

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        return self.network(self.game.encode_batch(states))

    def judges_planes(self) -> bool:
        return True

    def reads_constant_vector(self) -> bool:
        return self.constant_vector

    def evaluate_encoded(self, keys: list[bytes], encode: Callable) -> tuple[np.ndarray, np.ndarray]:
        return self.network(encode(None))
