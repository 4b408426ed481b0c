"""The network behind search's `Evaluator` seam: encode a batch, one forward pass, numpy out.

For inference the model is traced and frozen with TorchScript: measured on 2 cores, 15-20% more
positions/s for the small batches self-play feeds it (see BENCHMARKS.md), same outputs.
"""

from __future__ import annotations

import numpy as np
import torch

from pipeline.nets.senet import SENet
from pipeline.threads import follow_free_cores


def frozen_for_inference(model: SENet, observation_shape: tuple[int, ...]) -> torch.jit.ScriptModule:
    example = torch.zeros(2, *observation_shape)
    with torch.inference_mode():
        return torch.jit.freeze(torch.jit.trace(model.eval(), example, check_trace=False))


class NetworkEvaluator:
    def __init__(self, game, model: SENet):
        self.game = game
        self.model = frozen_for_inference(model, game.observation_shape)

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        follow_free_cores()
        planes = torch.from_numpy(self.game.encode_batch(states))
        with torch.inference_mode():
            logits, values = self.model(planes)
        return logits.numpy(), values.numpy()
