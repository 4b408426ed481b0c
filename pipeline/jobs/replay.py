"""The replay buffer: self-play samples of the last few generations, kept as one npz per generation
of the pipeline, and their symmetry augmentation."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from pipeline.atomic import write_npz

FIELDS = ("states", "policies", "values", "generations")


class DataError(ValueError):
    pass


def load_samples(path: Path | str) -> dict[str, np.ndarray]:
    path = Path(path)
    try:
        with np.load(path) as data:
            samples = {name: data[name] for name in FIELDS}
    except FileNotFoundError:
        raise DataError(f"{path}: sample file not found") from None
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as err:
        raise DataError(f"{path}: not a sample file with fields {', '.join(FIELDS)} ({err})") from None
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
    }


def windowed(previous: dict, new: dict, generation: int, window: int) -> dict[str, np.ndarray]:
    """Concatenate and keep only samples from the last `window` generations."""
    merged = {name: np.concatenate([previous[name], new[name]]) for name in FIELDS}
    keep = merged["generations"] > generation - window
    return {name: array[keep] for name, array in merged.items()}


def augment(game, samples: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every sample under every board symmetry of the game (seed 004's reflection, and more)."""
    out = {name: [] for name in FIELDS}
    for sym in game.symmetries():
        out["states"].append(np.ascontiguousarray(sym.board(samples["states"])))
        out["policies"].append(samples["policies"][:, sym.action_perm])
        out["values"].append(samples["values"])
        out["generations"].append(samples["generations"])
    return {name: np.concatenate(arrays) for name, arrays in out.items()}
