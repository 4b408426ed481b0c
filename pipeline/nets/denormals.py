"""Denormal floats (magnitudes below 1.2e-38) flushed to zero, in the weights and in the arithmetic.

Why: an x86 core takes tens of times longer over an operation whose operand or result is denormal, and
weight decay leaves trained networks full of them: 23% of the shipped Connect-4 champion's weights, 4%
of the 4-player Kingdomino one's. Measured on 2 cores, one thread, the Kingdomino champion at batch 64
on positions of real games: 470 positions/s as shipped, 6,500 with its denormal weights zeroed (ONNX
Runtime), 8,400 with the arithmetic flushed too (docs/results/onnx-runtime.md). Flushing changes
answers by less than 1e-30: search sees the same network.
"""

from __future__ import annotations

import copy

import torch

from pipeline.nets.senet import SENet

SMALLEST_NORMAL = torch.finfo(torch.float32).tiny


def flush_denormals() -> None:
    """This thread's float arithmetic treats denormal operands and results as zero (x86's DAZ and FTZ;
    torch's own threads take it over). Thread by thread, so each network call sets it."""
    torch.set_flush_denormal(True)


def without_denormal_weights(model: SENet) -> SENet:
    """A copy of `model` whose denormal weights are zero; the caller's model stays as it is."""
    model = copy.deepcopy(model)
    with torch.no_grad():
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor[tensor.abs() < SMALLEST_NORMAL] = 0.0
    return model
