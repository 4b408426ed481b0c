"""The network behind search's `Evaluator` seam: encode a batch, one forward pass, numpy out, on the
CPU or a GPU (`device` in params.yaml: auto takes a GPU when torch sees one).

For inference the model is traced and frozen with TorchScript: measured on 2 cores, 15-20% more
positions/s for the small batches self-play feeds it (see BENCHMARKS.md), same outputs.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from pipeline.config import ConfigError
from pipeline.nets.senet import SENet
from pipeline.threads import follow_free_cores

DEVICES = ("auto", "cpu", "cuda")
_device = ["auto"]  # this process's choice, set from params where a stage or worker starts


def use_device(name: str) -> None:
    """Where this process's networks run from now on: auto, cpu or cuda."""
    if name not in DEVICES:
        raise ValueError(f"device: expected one of {', '.join(DEVICES)}, got {name!r}")
    _device[0] = name


def inference_device() -> torch.device:
    if _device[0] == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device: cuda, but torch sees no GPU here (use auto or cpu)")
    return torch.device("cuda" if _device[0] != "cpu" and torch.cuda.is_available() else "cpu")


def frozen_for_inference(model: SENet, observation_shape: tuple[int, ...], device: torch.device | None = None):
    device = device or torch.device("cpu")
    if device.type != "cpu":
        model = copy.deepcopy(model).to(device)  # the caller's model stays where it is
    example = torch.zeros(2, *observation_shape, device=device)
    with torch.inference_mode():
        return torch.jit.freeze(torch.jit.trace(model.eval(), example, check_trace=False))


class NetworkEvaluator:
    def __init__(self, game, model: SENet):
        self.game = game
        self.device = inference_device()
        self.model = frozen_for_inference(model, game.observation_shape, self.device)

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        follow_free_cores()
        planes = torch.from_numpy(self.game.encode_batch(states)).to(self.device)
        with torch.inference_mode():
            logits, values = self.model(planes)
        return logits.cpu().numpy(), values.cpu().numpy()
