"""Trained networks that ship with the package, so `play` and `analyse` work right after install.

A shipped champion is a checkpoint `pipeline/champions/<name>.ckpt` with its card `<name>.yaml` beside
it: the game, the generation, the network, where it came from, the params that trained it (a copy under
`params/`), the training compute, the headline figures and the command that reproduces it. Commands take
its name wherever they take a checkpoint file: `python -m pipeline play connect4`. A file of that name
wins over a champion; a name that is neither is one error line listing the shipped names.

To ship a network: copy `models/best/gen_N.ckpt` to `pipeline/champions/<name>.ckpt` and write its card
(`python -m pipeline champions` lists what is shipped). Listing and resolving need no torch.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from pipeline.nets import CheckpointError

FOLDER = Path(__file__).resolve().parent


def names() -> list[str]:
    """The shipped champions, by name (a checkpoint in this folder)."""
    return sorted(path.stem for path in FOLDER.glob("*.ckpt"))


def checkpoint_path(name: str) -> Path:
    return FOLDER / f"{name}.ckpt"


def card_path(name: str) -> Path:
    return FOLDER / f"{name}.yaml"


def params_path(name: str) -> Path:
    """The params that trained shipped champion `name`."""
    return FOLDER / "params" / f"{name}.yaml"


def card(name: str) -> dict:
    """The champion's card; CheckpointError with one line when it is missing or not a mapping."""
    path = card_path(name)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise CheckpointError(f"{path}: card of shipped champion {name!r} unreadable ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise CheckpointError(f"{path}: the card of shipped champion {name!r} is not a mapping")
    return data


def shipped_name(text: str) -> str | None:
    """The shipped champion `text` names, or None when it is a file (a file of that name wins)."""
    return text if text in names() and not Path(text).is_file() else None


def resolve(text: str) -> Path:
    """The checkpoint a command-line CHECKPOINT names: an existing file or folder (left to the loader's
    own messages), else a shipped champion; else CheckpointError, one line listing the shipped names."""
    name = shipped_name(text)
    if name is not None:
        return checkpoint_path(name)
    if text and Path(text).exists():  # Path('') is the working folder
        return Path(text)
    shipped = ", ".join(names()) or "none"
    raise CheckpointError(
        f"{text or repr(text)}: neither a checkpoint file nor a shipped champion (shipped: {shipped})"
    )


def spent(name: str) -> dict:
    """The self-play simulations and wall hours that trained shipped champion `name` (`training.spent`
    on its card; zero where the card does not say): where a run warm-started from it begins its curve."""
    figures = (card(name).get("training") or {}).get("spent") or {}
    try:
        return {"simulations": int(figures.get("simulations", 0)), "hours": float(figures.get("hours", 0.0))}
    except (TypeError, ValueError):
        raise CheckpointError(f"{card_path(name)}: training.spent: expected numbers simulations and hours") from None


def play_search(name: str) -> dict:
    """The search settings shipped champion `name` plays with where they differ from its training params:
    `play.search` on its card, found by a play-time sweep (`sweep --play`); empty where there are none."""
    settings = (card(name).get("play") or {}).get("search") or {}
    if not isinstance(settings, dict):
        raise CheckpointError(f"{card_path(name)}: play.search: expected a mapping of search settings")
    return settings


def summary(name: str) -> str:
    """One line from the card: what `play` prints when it loads a shipped champion."""
    data = card(name)
    network, training = data.get("network") or {}, data.get("training") or {}
    shape = f"{network.get('blocks', '?')}x{network.get('channels', '?')} SENet"
    trained = (  # the totals are over every generation behind it, warm starts included, not only its last run's
        f"in all {training.get('generations', '?')} generations, {training.get('selfplay_games', '?')} self-play "
        f"games at {training.get('simulations', '?')} simulations a move ({training.get('wall', '?')})"
    )
    if training.get("generations") == 0 and training.get("teacher"):
        trained = f"no self-play: taught by {training['teacher']} ({training.get('wall', '?')})"
    tuned = play_search(name)
    settings = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in tuned.items())
    plays = f"; plays with {settings} (sweep --play)" if tuned else ""
    return (
        f"{name} champion: {shape}, generation {data.get('generation', '?')} of its last run; {trained}{plays}"
        f" — its card: python -m pipeline champions {name}"
    )
