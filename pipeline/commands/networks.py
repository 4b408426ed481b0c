"""The network a command names: a checkpoint file, a shipped champion's name, `best` (the network the
run in this folder ended with) or the MLflow registry's champion (`--champion`), the game it plays and
the params it searches with; shared by `analyse`, `play` and `match`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline import champions
from pipeline.config import Params, TrackingParams, load_params, parse_params
from pipeline.games import OPENSPIEL_PREFIX, Game, make_game
from pipeline.games.plugins import plugin_parts
from pipeline.harness.tracking import default_tracking_uri, download_champion
from pipeline.nets import CheckpointError
from pipeline.nets.header import check_header, stored_game
from pipeline.plumbing.clip import quoted
from pipeline.plumbing.failures import UsageError

RUN_BEST = "best"  # the CHECKPOINT that names the network of this folder's run
SUMMARY = Path("metrics/summary.json")  # the report stage's headline numbers (stages/paths.py)

if TYPE_CHECKING:
    from pipeline.nets.senet import SENet


def add_network_arguments(parser: argparse.ArgumentParser) -> None:
    shipped = ", ".join(champions.names()) or "none yet"
    parser.add_argument(
        "checkpoint",
        nargs="?",
        help=f"a checkpoint file, such as models/best/gen_5.ckpt, a shipped champion's name ({shipped}), "
        f"or {RUN_BEST}: the network this folder's run ended with",
    )
    parser.add_argument("--champion", action="store_true", help="the MLflow registry's champion instead of a file")
    parser.add_argument("--game", help="game spec (default: the game the checkpoint was trained for)")
    parser.add_argument("--tracking-uri", help="MLflow store of --champion (default: sqlite:///./mlflow.db)")
    parser.add_argument("--model-name", default=TrackingParams().model_name, help="registered model of --champion")
    add_params_argument(parser)


def add_params_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--params",
        help="params file of the search settings; default: a shipped champion's own (its params and card), "
        "else params.yaml where it plays the network's game, else the defaults",
    )


def network_params(given: str | None, network: str | None, game: str) -> Params:
    """`--params` where given; else, where the network names a shipped champion, the params that trained
    it with the search settings its card's `play.search` tuned for play (a champion plays as its card
    says, in a checkout or outside one); else `params.yaml` where it exists and plays `game`; else the
    schema's defaults for `game`. At a terminal, one line says which settings the search takes, and whence
    (a log or a pipe gets the command's own output alone)."""
    params, source = _network_params(given, network, game)
    if sys.stderr.isatty():
        search = params.search
        settings = f"c_puct {search.c_puct:.4g}, fpu_reduction {search.fpu_reduction:.4g}, root {search.root}"
        print(f"search: {settings} (from {source})", file=sys.stderr)
    return params


def card_search(params: Params, network: str | None) -> Params:
    """`params` with the search settings a shipped champion's card tuned for play (`play.search`) over
    their own, where `network` names one: how the champion plays, and what `shipped` means in a play-time
    sweep whatever `--params` holds; `params` as they are for any other network."""
    name = champions.shipped_name(network) if network else None
    tuned = champions.play_search(name) if name is not None else {}
    if not tuned:
        return params
    where = f"{champions.card_path(name)}: play.search"
    return parse_params({**params.model_dump(), "search": {**params.search.model_dump(), **tuned}}, where)


def _network_params(given: str | None, network: str | None, game: str) -> tuple[Params, str]:
    if given:
        params = load_params(given)
        if make_game(params.game).name != make_game(game).name:  # another game's c_puct, values, chance...
            raise UsageError(f"--params: {given} plays {params.game}, where the game is {game}")
        return params, given
    name = champions.shipped_name(network) if network else None
    if name is not None and champions.params_path(name).is_file():
        tuned = champions.play_search(name)  # what a play-time sweep confirmed, on the card
        source = f"the {name} champion's card" if tuned else f"the params that trained the {name} champion"
        return card_search(load_params(champions.params_path(name)), network), source
    local = Path("params.yaml")
    if local.is_file():
        params = load_params(local)
        if params.game == game:
            return params, "params.yaml"
    defaults = parse_params({"game": game, "generations": [{"gen": 1, "prev": 0}]}, f"the defaults for {quoted(game)}")
    return defaults, f"the defaults for {quoted(game)}"


def load_network(
    parser: argparse.ArgumentParser, args: argparse.Namespace, refuse: Callable[[Game], None] = lambda game: None
) -> tuple[Game, SENet | None]:
    """The game and the network the arguments name; no network when neither a file nor --champion is given.
    `refuse(game)` raises ValueError for arguments the game cannot take (more seats than it has), a
    parser error before a checkpoint file's network is loaded with torch."""
    if args.checkpoint and args.champion:
        parser.error("give a CHECKPOINT or --champion, not both")
    if args.champion:
        uri = args.tracking_uri or default_tracking_uri()
        with tempfile.TemporaryDirectory() as directory:
            # the champion of the game asked for, else of the params.yaml beside: never another game's
            path, version = download_champion(uri, args.model_name, Path(directory), args.game or local_game())
            print(f"champion: {version}", file=sys.stderr)
            return _load(parser, path, args.game, refuse)
    if args.checkpoint:
        return _load(parser, *checkpoint_named(args.checkpoint, args.game), refuse)
    if not args.game:
        parser.error("give a CHECKPOINT, --champion or --game")
    game = _game(parser, args.game)
    _refuse(parser, refuse, game)
    return game, None


def checkpoint_named(text: str, game: str | None) -> tuple[Path, str | None]:
    """The file a CHECKPOINT names and the game it must play (None: the file's own). `best` is the
    champion the report of this folder's run wrote to metrics/summary.json, `models/best/gen_N.ckpt` for
    its `champion_gen` N, of the game of params.yaml: the files an earlier game's run left in
    models/best are refused, not played. A file named `best` wins, as it does over a shipped champion."""
    if text != RUN_BEST or Path(text).exists():
        return champions.resolve(text), game
    try:
        generation = json.loads(SUMMARY.read_text())["champion_gen"]
    except OSError as err:
        raise CheckpointError(f"{RUN_BEST}: {SUMMARY}: {err.strerror}; expected a finished run (dvc repro)") from None
    except (ValueError, KeyError, TypeError):
        raise CheckpointError(f"{RUN_BEST}: {SUMMARY}: expected the report's champion_gen, a generation") from None
    return Path(f"models/best/gen_{generation}.ckpt"), game or local_game()


def _load(
    parser: argparse.ArgumentParser, path: Path, spec: str | None, refuse: Callable[[Game], None]
) -> tuple[Game, SENet]:
    """The game first, from `spec` or the file's own game read without torch, so that a game that cannot
    be, arguments it cannot take and a file that does not fit it are one line before torch's import;
    then the network, for that game."""
    spec = file_game(path, spec)
    game = _game(parser, spec) if spec else None
    if game is not None:
        _refuse(parser, refuse, game)
    check_header(path, game)
    from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint

    if game is not None:
        return game, load_checkpoint(path, game)
    load_checkpoint(path)  # one clear line for a missing or foreign file
    game = _game(parser, trusted_game(checkpoint_game(path), local_game(), path))
    _refuse(parser, refuse, game)
    return game, load_checkpoint(path, game)


def file_game(path: Path, given: str | None = None) -> str | None:
    """`given`, else the game checkpoint `path` names, read without torch and passed through
    `trusted_game`; None where it cannot be read so (the full load then says why)."""
    if given:
        return given
    stored = stored_game(path)
    return trusted_game(stored, local_game(), path) if stored else None


def _refuse(parser: argparse.ArgumentParser, refuse: Callable[[Game], None], game: Game) -> None:
    try:
        refuse(game)
    except ValueError as err:
        parser.error(str(err))


def trusted_game(spec: str, given: str | None = None, path: Path | None = None) -> str:
    """`spec`, read from checkpoint `path`, if building it imports no module the file chose: a built-in
    game with options, an `openspiel:` game or an installed entry point's name (an unknown name is then
    `make_game`'s own error). A `module:Class` spec would import and run that module, so it is refused
    in one line unless the user gave the same spec (`given`: `--game`, or the game of the params.yaml the
    command runs beside, which the user wrote)."""
    if spec.startswith(OPENSPIEL_PREFIX) or plugin_parts(spec) is None or spec == given:
        return spec  # make_game reads the prefix before a module:Class, as here
    where = f"{path}: " if path is not None else ""
    raise CheckpointError(
        f"{where}the checkpoint's game {spec!r} names a module to import; pass --game {spec!r} to trust it"
    )


def local_game() -> str | None:
    """The game of the `params.yaml` a command runs beside, which its user wrote: a checkpoint naming
    the same plugin game may import it (`trusted_game`)."""
    try:
        return load_params("params.yaml").game if Path("params.yaml").is_file() else None
    except ValueError:
        return None


def _game(parser: argparse.ArgumentParser, spec: str) -> Game:
    try:
        return make_game(spec)
    except ValueError as err:
        parser.error(str(err))
