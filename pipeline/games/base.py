"""The one contract every game fulfils, so search, training and play never special-case a game."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pipeline.games.compiled import CompiledRules
from pipeline.plumbing.failures import IllegalMove as IllegalMove  # part of the contract: rules raise it


@dataclass(frozen=True)
class Symmetry:
    """A board symmetry: `board` maps (..., H, W) planes; `action_perm` re-indexes a policy vector.

    The transformed policy is `policy[..., action_perm]`, so a target stays aligned with its planes.
    """

    board: Callable[[np.ndarray], np.ndarray]
    action_perm: np.ndarray


class Game(Protocol):
    """Rules only: no search, no torch. States are immutable and cheap to copy."""

    name: str
    num_players: int
    num_actions: int
    observation_shape: tuple[int, int, int]

    def initial_state(self, rng: np.random.Generator | None = None) -> Any: ...

    def legal_mask(self, state: Any) -> np.ndarray: ...

    def legal_actions(self, state: Any) -> list[int]: ...

    def step(self, state: Any, action: int, rng: Any = None) -> tuple[Any, Any]:
        """Apply `action`; return the new state and a chance key (None for deterministic moves)."""

    def to_play(self, state: Any) -> int: ...

    def ply(self, state: Any) -> int:
        """Moves played so far (drives temperature schedules)."""

    def is_terminal(self, state: Any) -> bool: ...

    def scores(self, state: Any) -> np.ndarray:
        """Score vector of a finished game, one entry per absolute seat."""

    def encode(self, state: Any) -> np.ndarray:
        """Network input planes seen from the player to move."""

    def encode_batch(self, states: list[Any]) -> np.ndarray: ...

    def symmetries(self) -> list[Symmetry]: ...

    def random_playout(self, state: Any, rng: Any) -> np.ndarray:
        """Play uniformly random moves to the end; return the score vector (absolute seats)."""

    def render(self, state: Any) -> str: ...

    def parse_move(self, state: Any, text: str) -> int: ...

    def format_move(self, action: int) -> str: ...


# What some games can do beyond the contract, declared here and asked for by `isinstance`, never by a
# method name spelt out where it is used.


@runtime_checkable
class BoundsItsLength(Protocol):
    """A game that may run longer than `contract.MAX_PLIES` moves says how long it may run."""

    def max_plies(self) -> int: ...


@runtime_checkable
class StepsLegalMoves(Protocol):
    """A game whose `step` checks the action's legality at a cost search need not pay (Kingdomino's
    check computes the whole legal mask again): search steps only with actions of a legal mask it
    holds, through `step_legal`, which moves as `step` does without the check."""

    def step_legal(self, state: Any, action: int, rng: Any = None) -> tuple[Any, Any]: ...


@runtime_checkable
class CompilesRules(Protocol):
    """A game whose rules are also compiled over int64 rows (`compiled.py`): search creates, judges and
    encodes its new nodes for a whole batch of trees in a few compiled calls (a chance move's result drawn
    in Python, its row written compiled)."""

    def compiled_rules(self) -> CompiledRules: ...


@runtime_checkable
class PlaysGreedy(Protocol):
    """A game with a player-greedy policy (Kingdomino's: the anchor's greedy player), which greedy
    playouts at the leaves and `mce` play out with."""

    def greedy_action(self, state: Any) -> int: ...


@runtime_checkable
class PlaysOutInBatches(Protocol):
    """A game that plays a batch of greedy playouts at once (compiled), returning scores and margins."""

    def greedy_outcomes(self, states: list[Any], rngs: list) -> tuple[np.ndarray, np.ndarray]: ...


@runtime_checkable
class HasMargins(Protocol):
    """A game whose finished states have score margins (points apart), for the `margin` value scheme,
    and the gap that counts as a clear win (Kingdomino: 20 points)."""

    def margins(self, state: Any) -> np.ndarray: ...

    def margin_scale(self) -> float: ...


def margin_scale(game) -> float:
    """A game's clear-win gap for the `margin` scheme; 1 where it has no margins (the scheme is refused)."""
    return game.margin_scale() if offers(game, HasMargins) else 1.0


@runtime_checkable
class HasConstantPlanes(Protocol):
    """A game whose encoding ends in planes constant over the board (Kingdomino's rows of dominoes, kings
    and phase), which the network reads as a vector."""

    def constant_planes(self) -> int: ...


@runtime_checkable
class JoinsMoves(Protocol):
    """A game that may write a line of moves one character a move, unseparated (Connect-4's test sets'
    `4453`); `joins_moves` says whether this variant does."""

    def joins_moves(self) -> bool: ...


def joins_moves(game) -> bool:
    return offers(game, JoinsMoves) and game.joins_moves()


@runtime_checkable
class DrawsSeats(Protocol):
    """A game whose board draws each seat as a symbol (X, O, ...), which `play` names seats by."""

    def seat_symbol(self, seat: int) -> str: ...


@runtime_checkable
class ReadsDraws(Protocol):
    """A game whose chance outcomes a person can write in a position (Kingdomino's row draws)."""

    def parse_draw(self, state: Any, text: str) -> Any: ...


@runtime_checkable
class BringsPlayers(Protocol):
    """A game with players of its own (a solver, alpha-beta, a policy table): the kinds of player it
    brings (Connect-4's `alphabeta` and `solver`, Pig's `hold` and `optimal`: `match connect4 alphabeta:5`), each
    written `module.path:factory`, `factory(game, spec) -> Agent`. Strings, imported only when one plays,
    because a player lives a floor above its game (docs/architecture.md)."""

    def players(self) -> dict[str, str]: ...


OWN_KIND = re.compile(r"[a-z][a-z0-9_]*")  # how a kind of player a game brings is spelt: `alphabeta`, `hold`


def players_of(game) -> dict[str, str]:
    return game.players() if offers(game, BringsPlayers) else {}


@runtime_checkable
class BringsExperiments(Protocol):
    """A game with evaluation experiments of its own (Connect-4's alpha-beta table and Pons' benchmark,
    Pig's oracle): each written `module.path:NAME`, NAME an `Experiment` (`experiments/base.py`)
    whose section of `params.evaluate` switches it; strings, for the same reason as `BringsPlayers`."""

    def experiments(self) -> tuple[str, ...]: ...


def experiments_of(game) -> tuple[str, ...]:
    return game.experiments() if offers(game, BringsExperiments) else ()


@runtime_checkable
class BringsSolver(Protocol):
    """A game with an exact solver of its own, run by `python -m pipeline solve GAME [options]`: written
    `module.path:main`, `main(game, argv)` parsing the solver's own options; None where this variant
    has none (Connect-4 and Tic-Tac-Mo do, Connect 3x3 does not). A string, as `BringsPlayers`'."""

    def solver(self) -> str | None: ...


@runtime_checkable
class SizesItsBench(Protocol):
    """A game `python -m pipeline bench` measures by default, at a network size of its own: (the spec it
    is measured as, SE blocks, channels, share of the self-play games), kept so that figures compare
    across sessions; None for a variant that is not measured by default."""

    def bench(self) -> tuple[str, int, int, float] | None: ...


def bench_of(game) -> tuple[str, int, int, float] | None:
    return game.bench() if offers(game, SizesItsBench) else None


def solver_of(game) -> str | None:
    return game.solver() if offers(game, BringsSolver) else None


ABILITIES = (
    PlaysGreedy,
    PlaysOutInBatches,
    HasMargins,
    HasConstantPlanes,
    JoinsMoves,
    DrawsSeats,
    ReadsDraws,
    BringsPlayers,
    BringsExperiments,
    BringsSolver,
    SizesItsBench,
)


def half_an_ability(game) -> str | None:
    """What a game has of an ability but not all of it, or not as methods (`margin_scale = 20.0`, an
    attribute, where `margin_scale()` is asked): `offers` would miss it, or it would fail when called."""
    for ability in ABILITIES:
        names = [name for name, value in vars(ability).items() if callable(value) and not name.startswith("_")]
        present = [name for name in names if hasattr(game, name)]
        if present and (len(present) < len(names) or not all(callable(getattr(game, n)) for n in present)):
            methods = " and ".join(f"{name}()" for name in names)
            return f"{ability.__name__} (pipeline/games/base.py) is {methods}, as methods; it has {', '.join(present)}"
    return None


def offers(game, ability: type) -> bool:
    """`isinstance(game, ability)` for the abilities above, answered once per game class: a runtime
    protocol check costs about 80 microseconds, and search asks once a simulation (4% of a timed
    Kingdomino move)."""
    return class_offers(type(game), ability)


@cache
def class_offers(cls: type, ability: type) -> bool:
    """`offers` for a game class. `StepsLegalMoves` only where `step_legal` is written with the `step`
    it stands for: a subclass that rewrote `step` (a user's variant of a built-in game) keeps its own
    rules, which an inherited `step_legal` would bypass."""
    if ability is StepsLegalMoves:
        return hasattr(cls, "step_legal") and issubclass(_written_in(cls, "step_legal"), _written_in(cls, "step"))
    return issubclass(cls, ability)


def _written_in(cls: type, method: str) -> type:
    return next(c for c in cls.__mro__ if method in vars(c))


def win_loss_scores(num_players: int, winner: int | None) -> np.ndarray:
    """Petosa & Balch's score vector: +1 for the winner, -1 for every other seat, 0 for all on a draw."""
    if winner is None:
        return np.zeros(num_players, dtype=np.float32)
    scores = -np.ones(num_players, dtype=np.float32)
    scores[winner] = 1.0
    return scores


def rotate_to_mover(values: np.ndarray, mover: int) -> np.ndarray:
    """Absolute-seat vector(s) -> vector(s) whose index 0 is `mover` (the network's view)."""
    return np.roll(values, -mover, axis=-1)


def to_absolute(values: np.ndarray, movers: np.ndarray) -> np.ndarray:
    """Rows of mover-relative value vectors -> absolute seats (row b rotated by movers[b]): the inverse
    of `rotate_to_mover`, row by row."""
    seats = values.shape[1]
    index = (np.arange(seats)[None, :] - movers[:, None]) % seats
    return values.astype(np.float64)[np.arange(len(values))[:, None], index]  # take_along_axis's 40 µs a call
