"""The network behind search's `Evaluator` seam: encode a batch, one forward pass, numpy out."""

from __future__ import annotations

import numpy as np
import torch

from pipeline.nets.senet import SENet


class NetworkEvaluator:
    def __init__(self, game, model: SENet):
        self.game = game
        self.model = model.eval()
        self.positions = 0  # positions evaluated, for throughput figures

    def evaluate(self, states: list) -> tuple[np.ndarray, np.ndarray]:
        planes = torch.from_numpy(self.game.encode_batch(states))
        with torch.inference_mode():
            logits, values = self.model(planes)
        self.positions += len(states)
        return logits.numpy(), values.numpy()
