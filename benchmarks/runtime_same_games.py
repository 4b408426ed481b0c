"""Do ONNX Runtime and torch play the same self-play games from the same seed? Each shipped champion
plays `--games` self-play games with its own params (float32, one worker) once per runtime; the
recorded positions and policy targets are compared. The runtimes' answers differ by about 1e-7, which
can flip a search's choice only where two moves' PUCT scores tie to that precision; from there the
games part. Within one runtime, the same seed gives the same games (tests/test_seeds.py).

Usage: python benchmarks/runtime_same_games.py [--champions tictacmo connect4 kingdomino2] [--games 32]"""

import argparse
import json

import numpy as np

from pipeline import champions
from pipeline.config import load_params, parse_params
from pipeline.games import make_game
from pipeline.jobs.selfplay import run_selfplay
from pipeline.nets.checkpoint import load_checkpoint
from pipeline.threads import use_threads


def selfplay_samples(name: str, games: int, runtime: str) -> dict[str, np.ndarray]:
    params = load_params(champions.params_path(name))
    game = make_game(params.game)
    model = load_checkpoint(champions.checkpoint_path(name), game.name).eval()
    data = params.model_dump(mode="json")
    data.update(workers=1, generations=[{"gen": 1, "prev": 0}])
    data["search"] |= {"precision": "float32", "runtime": runtime}
    data["selfplay"] |= {"games": games}
    data["backend"] |= {"inference_server": "off"}
    return run_selfplay(game, model, parse_params(data), 1, progress=False).samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--champions", nargs="+", default=["tictacmo", "connect4", "kingdomino2"])
    parser.add_argument("--games", type=int, default=32)
    args = parser.parse_args()
    use_threads(1)
    for name in args.champions:
        onnx, torch_ = (selfplay_samples(name, args.games, runtime) for runtime in ("onnxruntime", "torch"))
        same_length = len(onnx["states"]) == len(torch_["states"])
        first_apart = None
        if same_length:
            apart = [
                i for i in range(len(onnx["states"])) if not np.array_equal(onnx["states"][i], torch_["states"][i])
            ]
            first_apart = apart[0] if apart else None
        figures = {
            "champion": name,
            "samples": [len(onnx["states"]), len(torch_["states"])],
            "identical_positions": same_length and first_apart is None,
            "first_position_apart": first_apart,
            "max_policy_difference": float(np.abs(onnx["policies"] - torch_["policies"]).max())
            if same_length
            else None,
        }
        print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
