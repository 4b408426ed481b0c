"""Is ONNX Runtime's int8 quantization worth a path of its own? The shipped champions' networks, one
thread, positions a second at batch 1 and 64 on positions of random games: float32 in torch (frozen
TorchScript) and ONNX Runtime, int8 in torch (`search.precision: int8`, FX quantization) and in ONNX
Runtime (`quantize_static`, QDQ, per-channel weights, activations calibrated on 1,024 positions), with
how often int8's best move agrees with float32's on 512 other positions
(docs/results/onnx-runtime.md, "int8").

Usage: python benchmarks/onnx_int8_probe.py [--champions connect4 kingdomino tictacmo]"""

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process

from pipeline import champions
from pipeline.games import make_game
from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint
from pipeline.nets.evaluator import inference_network
from pipeline.nets.int8 import calibration_positions
from pipeline.nets.onnx_runtime import INPUT, onnx_bytes
from pipeline.threads import use_threads


def positions_per_s(network, planes: np.ndarray, seconds: float = 1.5) -> float:
    network(planes)
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        network(planes)
        calls += 1
    return calls * len(planes) / (time.perf_counter() - started)


class Calibration(CalibrationDataReader):
    def __init__(self, planes: np.ndarray):
        self.batches = iter([{INPUT: planes[i : i + 64]} for i in range(0, len(planes), 64)])

    def get_next(self):
        return next(self.batches, None)


def onnx_int8(model, game, folder: Path):
    """The network quantized by ONNX Runtime, as a callable like `inference_network`'s."""
    (folder / "f32.onnx").write_bytes(onnx_bytes(model, game))
    quant_pre_process(folder / "f32.onnx", folder / "pre.onnx")
    planes = game.encode_batch(calibration_positions(game, 1024)).astype(np.float32)
    quantize_static(
        folder / "pre.onnx",
        folder / "int8.onnx",
        Calibration(planes),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(folder / "int8.onnx", options, providers=["CPUExecutionProvider"])
    return lambda x: session.run(None, {INPUT: x.astype(np.float32)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--champions", nargs="+", default=["connect4", "kingdomino", "tictacmo"])
    args = parser.parse_args()
    use_threads(1)
    for name in args.champions:
        path = champions.checkpoint_path(name)
        game = make_game(checkpoint_game(path))
        model = load_checkpoint(path, game.name).eval()
        with tempfile.TemporaryDirectory() as folder:
            networks = {
                "torch float32": inference_network(model, game, "float32", "torch"),
                "onnxruntime float32": inference_network(model, game, "float32", "onnxruntime"),
                "torch int8": inference_network(model, game, "int8", "torch"),
                "onnxruntime int8": onnx_int8(model, game, Path(folder)),
            }
            planes = game.encode_batch(calibration_positions(game, 512, seed=1))
            best = networks["onnxruntime float32"](planes)[0].argmax(1)
            for label, network in networks.items():
                rates = [round(positions_per_s(network, planes[:batch])) for batch in (1, 64)]
                agree = float((network(planes)[0].argmax(1) == best).mean())
                print(f"{name:10s} {label:20s} batch 1: {rates[0]:6d}  batch 64: {rates[1]:6d}  best move {agree:.3f}")


if __name__ == "__main__":
    main()
