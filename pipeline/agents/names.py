"""The one grammar of player names, `KIND` or `KIND:N`, shared by `play`'s seats, `match`'s opponent and
the sweep's panel: `uct:200`, `greedy`, `mce:500`, `random`, `human`, `az:100`, a player the game brings
of its own (`games/base.py`'s `BringsPlayers`: Connect-4's `alphabeta:5` and `solver`, Pig's `hold:20`
and `optimal`), or a network (a checkpoint file or a shipped champion's name). The searching kinds also move by time:
`uct:0.5s`, `mce:200ms`, `az:1s` search that long a move (equal wall time per move, as Kingdomino's
anchor compares its players). Each command says which kinds it
seats; anything else is refused with one line naming the text and what was expected. A baseline's
name becomes its `AgentSpec` here (`baseline_spec`), so every command builds the same player from
the same words."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline import champions
from pipeline.config import MAX_MOVE_SECONDS, MAX_SIMULATIONS, TIMED_SIMULATIONS
from pipeline.games.base import OWN_KIND

if TYPE_CHECKING:
    from pipeline.agents.spec import AgentSpec

# What N means for the kinds that take one; the others take none (a game's own kinds: any N or none).
NUMBERS = {"uct": "simulations", "az": "simulations", "mce": "playouts"}
NETWORK = "network"  # a checkpoint file or a shipped champion, named by its text
OWN = "own"  # a player the game brings, `KIND` or `KIND:N`, checked against the game when it is built
BASELINES = ("uct", "mce", "greedy", "random", OWN)  # need no network
SEATS = ("human", "az", "uct", "mce", "greedy", "random")  # who can sit at `play`'s table
OPTIONAL_NUMBER = ("uct", "az")  # their N may default to a command's budget (`play --sims`)
TIMED = ("uct", "az", "mce")  # their N may be a time a move instead: `uct:0.5s`, `mce:200ms`
_TIME = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(s|ms)")  # ASCII digits: `\d` takes any script's


@dataclass(frozen=True)
class PlayerName:
    kind: str
    number: int | None = None  # `NUMBERS[kind]`, simulations or playouts, or a game's own player's N
    text: str = ""  # as written; the file or champion of a network
    seconds: float | None = None  # a time a move instead of `number` (`TIMED` kinds)

    def budget(self) -> tuple[int, float]:
        """(simulations, seconds a move) of a searching kind: its count, or its time with the timed
        search's cap (`TIMED_SIMULATIONS`)."""
        return self.number or TIMED_SIMULATIONS, self.seconds or 0.0


def parse_player(text: str, kinds: Collection[str], default_number: int | None = None) -> PlayerName:
    """The player `text` names among `kinds`; `uct` and `az` without N search `default_number`
    simulations where one is given. ValueError with one line on anything else."""
    text = text.strip()
    if not text:
        raise ValueError(f"an empty player name; expected {expected(kinds, default_number is not None)}")
    kind, colon, number = text.partition(":")
    if kind in kinds and kind != NETWORK:
        optional = default_number is not None and kind in OPTIONAL_NUMBER
        if kind not in NUMBERS and colon:
            raise ValueError(f"{text!r}: {kind} takes no number")
        if kind in TIMED and (seconds := _seconds(number)) is not None:
            if seconds > MAX_MOVE_SECONDS:
                raise ValueError(f"{text!r}: expected at most {MAX_MOVE_SECONDS:,.0f} seconds a move")
            return PlayerName(kind, None, text, seconds)
        digits = number.isascii() and number.isdigit()  # '٣' and '²' are digits to str.isdigit
        if kind in NUMBERS and (colon or not optional) and not (digits and int(number) > 0):
            timed = f", or a time a move such as {kind}:0.5s" if kind in TIMED else ""
            raise ValueError(f"{text!r}: expected {kind}:N, N the {NUMBERS[kind]}, a positive integer{timed}")
        if kind in NUMBERS and colon and int(number) > MAX_SIMULATIONS:
            raise ValueError(f"{text!r}: expected {kind}:N, N the {NUMBERS[kind]}, at most {MAX_SIMULATIONS:,}")
        if kind not in NUMBERS:
            return PlayerName(kind, None, text)
        return PlayerName(kind, int(number) if colon else default_number, text)
    network = Path(text).exists() or champions.shipped_name(text) is not None  # a network wins over a kind
    if NETWORK in kinds and network:
        return PlayerName(NETWORK, text=text)
    if OWN in kinds and not network and OWN_KIND.fullmatch(kind) and kind not in (*NUMBERS, *kinds, "human"):
        if colon and not (number.isascii() and number.isdigit() and 0 < int(number) <= MAX_SIMULATIONS):
            raise ValueError(f"{text!r}: expected {kind}:N, N a positive integer, at most {MAX_SIMULATIONS:,}")
        return PlayerName(kind, int(number) if colon else None, text)
    raise ValueError(f"unknown player {text!r}; expected {expected(kinds, default_number is not None)}")


def _seconds(text: str) -> float | None:
    """`0.5s` or `500ms` in seconds; None for anything else (a count, or no time at all)."""
    match = _TIME.fullmatch(text)
    if match is None or float(match[1]) <= 0:
        return None
    return float(match[1]) / (1000 if match[2] == "ms" else 1)


def expected(kinds: Collection[str], optional_numbers: bool = False) -> str:
    """The kinds as they are written, `uct:N, alphabeta:N, random or solver` (`uct[:N]` where a
    default budget stands in for a missing N)."""
    words = []
    for kind in kinds:
        if kind == NETWORK:
            words.append(f"a checkpoint file or a shipped champion ({', '.join(champions.names()) or 'none'})")
        elif kind == OWN:
            words.append("a player the game brings (KIND or KIND:N; an unknown KIND gets the list of the game's)")
        elif kind in NUMBERS:
            words.append(f"{kind}[:N]" if optional_numbers and kind in OPTIONAL_NUMBER else f"{kind}:N")
        else:
            words.append(kind)
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


def refuse_not_brought(player: PlayerName, game) -> None:
    """A kind that is neither the library's nor one `game` brings (`games/base.py`'s `BringsPlayers`):
    ValueError with one line naming those it brings, where the game is known before any is built."""
    from pipeline.games.base import players_of

    own = players_of(game)
    if player.kind not in (*NUMBERS, *BASELINES, *SEATS, NETWORK) and player.kind not in own:
        brings = (
            f", or one of the players {game.name} brings: {', '.join(own)}"
            if own
            else (f" ({game.name} brings no players of its own)")
        )
        raise ValueError(f"unknown player {player.text!r}; expected {expected(BASELINES[:-1])}{brings}")


def seated_baseline(game, text: str, name: str, c_uct: float, seed: int) -> tuple[PlayerName, AgentSpec]:
    """The baseline `text` names, playing `game` under `name` (a teacher, a self-play opponent); a
    ValueError for a name the grammar does not know or a player the game cannot seat."""
    player = parse_player(text, BASELINES)
    refuse_not_brought(player, game)
    spec = baseline_spec(player, name, c_uct, seed)
    spec.build(game)
    return player, spec


def baseline_spec(player: PlayerName, name: str, c_uct: float, seed: int) -> AgentSpec:
    """The spec of a baseline the grammar names (`names.BASELINES`), playing under `name`; `c_uct` and
    `seed` are a UCT baseline's exploration constant and rollout seed."""
    from pipeline.agents.spec import AgentSpec  # here: the grammar reads arguments before torch is imported

    n = player.number
    if player.kind == "uct":
        simulations, seconds = player.budget()
        return AgentSpec.uct(name, simulations, c_uct, seed, seconds)
    if player.kind == "mce":
        return AgentSpec.monte_carlo(name, *player.budget())
    if player.kind == "greedy":
        return AgentSpec(name, "player_greedy")
    if player.kind in ("human", "az", NETWORK):
        raise ValueError(f"{player.text!r}: not a baseline")
    return AgentSpec(name, player.kind, number=n or 0)  # random, or a player the game brings
