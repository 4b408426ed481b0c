"""The replay buffer: self-play samples of the last few generations, kept as one npz per generation
of the pipeline, and their symmetry augmentation, drawn batch by batch."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from pipeline.config import TrainParams
from pipeline.plumbing.atomic import write_npz
from pipeline.plumbing.failures import DataError

FIELDS = ("states", "policies", "values", "generations", "scores")  # scores: the score head's targets


def load_samples(path: Path | str) -> dict[str, np.ndarray]:
    path = Path(path)
    try:
        with np.load(path) as data:
            samples = {name: data[name] for name in FIELDS}
    except FileNotFoundError:
        raise DataError(f"{path}: sample file not found") from None
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as err:
        reason = "it holds pickled objects, which are never loaded" if "allow_pickle" in str(err) else err
        raise DataError(f"{path}: not a sample file with fields {', '.join(FIELDS)} ({reason})") from None
    sizes = {len(v) for v in samples.values()}
    if len(sizes) != 1:
        raise DataError(f"{path}: fields have different lengths {sorted(sizes)}")
    return samples


def save_samples(path: Path | str, samples: dict[str, np.ndarray]) -> None:
    write_npz(path, **{name: samples[name] for name in FIELDS})


def empty_samples(game) -> dict[str, np.ndarray]:
    return {
        "states": np.zeros((0, *game.observation_shape), dtype=np.uint8),
        "policies": np.zeros((0, game.num_actions), dtype=np.float32),
        "values": np.zeros((0, game.num_players), dtype=np.float32),
        "generations": np.zeros(0, dtype=np.int32),
        "scores": np.zeros((0, game.num_players), dtype=np.float32),
    }


def window_generations(params: TrainParams, generation: int) -> int:
    """How many generations of self-play the window keeps when training `generation`: `replay_window`,
    or with `replay_window_growth` N a window that starts at 1 and grows by one every N generations up
    to it. Why grow it: the first networks are weak and change fast, so their games are worth keeping
    only briefly; later a wide window holds more distinct positions (KataGo's and AlphaZero.jl's
    growing buffers)."""
    if params.replay_window_growth == 0:
        return params.replay_window
    return min(params.replay_window, 1 + (generation - 1) // params.replay_window_growth)


def windowed(previous: dict, new: dict, generation: int, params: TrainParams) -> dict[str, np.ndarray]:
    """Concatenate and keep only samples from the last `window_generations` generations."""
    merged = {name: np.concatenate([previous[name], new[name]]) for name in FIELDS}
    keep = merged["generations"] > generation - window_generations(params, generation)
    return {name: array[keep] for name, array in merged.items()}


def position_keys(states: np.ndarray) -> np.ndarray:
    """One hashable, comparable key per sample: its planes' bytes (equal keys, equal positions)."""
    flat = np.ascontiguousarray(states.reshape(len(states), -1))
    return flat.view(np.dtype((np.void, flat.shape[1]))).ravel()


def merge_positions(samples: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One sample per distinct position, its policy and value targets the means of its copies, with a
    training `weights` field of 1 + log2(copies), scaled to mean 1 (AlphaZero.jl's position averaging
    with its log weighting). Why: the opening positions recur thousands of times in a window, so
    unmerged they take most of the training steps and their noisy outcomes are fitted one by one."""
    _, first, inverse, counts = np.unique(
        position_keys(samples["states"]), return_index=True, return_inverse=True, return_counts=True
    )

    def mean_of_copies(targets: np.ndarray) -> np.ndarray:
        sums = np.zeros((len(counts), targets.shape[1]), dtype=np.float64)
        np.add.at(sums, inverse, targets)
        return (sums / counts[:, None]).astype(targets.dtype)

    generations = np.zeros(len(counts), dtype=samples["generations"].dtype)
    np.maximum.at(generations, inverse, samples["generations"])
    weights = 1 + np.log2(counts)
    return {
        "states": samples["states"][first],
        "policies": mean_of_copies(samples["policies"]),
        "values": mean_of_copies(samples["values"]),
        "generations": generations,
        "scores": mean_of_copies(samples["scores"]),
        "weights": (weights / weights.mean()).astype(np.float32),
    }


class Augmented:
    """Every sample under every board symmetry of the game (Parikh & Wu's reflection, and more), sample i
    under symmetry s at index s * n + i, made batch by batch as the batches are drawn: the set is
    `len(symmetries)` times the samples (8 for a square board), which held at once took 18 GB for one
    generation of 4-player Kingdomino. Fields other than the board and the policy (values,
    generations, scores, weights) are the sample's own."""

    def __init__(self, samples: dict[str, np.ndarray], symmetries: list):
        self.samples, self.symmetries = samples, symmetries
        self.count = len(samples["states"])

    def __len__(self) -> int:
        return self.count * len(self.symmetries)

    def batch(self, indices) -> dict[str, np.ndarray]:
        """The samples at `indices` (of the augmented set), each under its symmetry."""
        symmetry, index = np.divmod(np.asarray(indices), self.count)
        out = {name: array[index] for name, array in self.samples.items()}
        for s in np.unique(symmetry):
            rows, sym = symmetry == s, self.symmetries[s]
            out["states"][rows] = sym.board(out["states"][rows])
            out["policies"][rows] = out["policies"][rows][:, sym.action_perm]
        return out
