"""int8 inference on the CPU (`search.precision: int8`): the network's weights and activations in 8-bit
integers, the activations' ranges calibrated on positions of random games. On this 2-core machine
Connect-4 self-play plays 1.3-1.6x the simulations/s of bfloat16, with the same mistakes at 600
simulations (docs/results/precision.md, "int8 inference").

Built on torch.ao.quantization's FX mode, the one int8 path for convolutions in torch's CPU build that
needs no compiler. torch marks it deprecated in favour of torchao's, which needs torch.compile; its
warnings are silenced here, and a torch without it is one error line. Its default x86 settings keep
activations to 7 bits, which no x86 CPU can overflow, with or without VNNI."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import torch

from pipeline.config import ConfigError
from pipeline.nets.checkpoint import weights_digest
from pipeline.nets.senet import SENet

CALIBRATION_POSITIONS = 2048
KEPT = 8  # quantized networks kept per process, so evaluators of the same weights share one
_quantized: dict[tuple[str, str], torch.jit.ScriptModule] = {}


def quantized_for_inference(model: SENet, game) -> torch.jit.ScriptModule:
    """`model` in int8, traced and frozen; once per process for the same weights and game (calibration
    takes seconds, and each search agent, benchmark and greedy TD(lambda) target builds an evaluator)."""
    key = (game.name, weights_digest(model.state_dict()))
    if key not in _quantized:
        if len(_quantized) >= KEPT:
            _quantized.pop(next(iter(_quantized)))
        _quantized[key] = _quantize(model, game)
    return _quantized[key]


def _quantize(model: SENet, game) -> torch.jit.ScriptModule:
    if "x86" not in torch.backends.quantized.supported_engines:
        raise ConfigError("search.precision: int8 needs an x86 CPU; use bfloat16 or float32 here")
    try:
        from torch.ao.quantization import get_default_qconfig_mapping
        from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    except ImportError:
        raise ConfigError("search.precision: int8 needs torch.ao.quantization, gone from this torch") from None
    planes = torch.from_numpy(game.encode_batch(calibration_positions(game))).float()
    torch.backends.quantized.engine = "x86"
    with warnings.catch_warnings(), torch.inference_mode():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(copy.deepcopy(model).eval(), get_default_qconfig_mapping("x86"), (planes[:2],))
        for start in range(0, len(planes), 256):
            prepared(planes[start : start + 256])
        return torch.jit.freeze(torch.jit.trace(convert_fx(prepared), planes[:2]))


def calibration_positions(game, count: int = CALIBRATION_POSITIONS, seed: int = 0) -> list:
    """The non-terminal positions of uniformly random games, in order, until `count`: every stage of a
    game, as search meets them. Seeded, so the same network quantizes the same way everywhere."""
    rng = np.random.default_rng(seed)
    positions: list = []
    while len(positions) < count:
        state = game.initial_state(rng)
        while not game.is_terminal(state) and len(positions) < count:
            positions.append(state)
            state, _ = game.step(state, int(rng.choice(game.legal_actions(state))), rng)
    return positions
