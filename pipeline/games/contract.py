"""A game is checked before it plays: a user's game (a plugin) plays a few seeded random games through
the contract when it is first made in a process, so that a fault of its code is one line naming the
game, the method and what was expected, not a hang in search or a traceback from inside ONNX Runtime
minutes into a run. The built-in games pass the same check in the tests."""

from __future__ import annotations

import math

import numpy as np

from pipeline.games import pcg64
from pipeline.games.base import BoundsItsLength, CompilesRules, StepsLegalMoves, offers
from pipeline.plumbing.clip import clip, quoted
from pipeline.plumbing.failures import GameFault

CHECK_GAMES = 3  # random games a check plays
CHECK_PLIES = 300  # moves a checked game plays at most (a longer game is checked that far)
# Search keeps a row of `num_actions` priors, visits, children and value sums per tree node (about
# 40 bytes an action): 2^16 actions already take 2.6 GB for a 1,000-node timed move.
MAX_ACTIONS = 2**16
MAX_OBSERVATION = 2**22  # numbers in one observation: 16 MiB of float32 a position
MAX_PLAYERS = 64  # seats at one table: search keeps a value a seat a node
# Moves a game plays at most, unless it declares its own `max_plies()` (`BoundsItsLength`): a game whose end
# never comes (the fault a user's own rules most often have) stops a match, a self-play or `play` with one
# line instead of running for ever. Kingdomino, the longest built-in game, ends within 100.
MAX_PLIES = 10_000


def ply_cap(game) -> int:
    """The most moves a game of `game` may take: its own `max_plies`, else `MAX_PLIES`."""
    return int(game.max_plies()) if offers(game, BoundsItsLength) else MAX_PLIES


def check_length(game, plies: int) -> None:
    """One line where a game that has not ended has run past its cap."""
    if plies >= ply_cap(game):
        raise GameFault(
            f"game {quoted(game.name)}: no end after {plies:,} moves (expected a game to end within "
            f"{ply_cap(game):,}; a longer game declares max_plies)"
        )


def check_contract(game, seed: int = 0) -> None:
    """Play `CHECK_GAMES` seeded random games (`CHECK_PLIES` moves at most), checking at every state:
    the observation's shape, the legal mask's shape and that only a finished game has no legal move,
    finite scores in [-1, 1], one per seat, and that `step` gives the same state for the same seed (and
    `step_legal`, where the game offers it, the state `step` gives); where the game offers compiled rules,
    that they say what its rules say (`_check_compiled`)."""
    name = quoted(game.name)
    actions, shape, seats = game.num_actions, tuple(game.observation_shape), game.num_players
    if not 1 <= actions <= MAX_ACTIONS:
        raise GameFault(
            f"game {name}: num_actions: expected 1 to {MAX_ACTIONS:,} (search keeps a row a node), got {actions:,}"
        )
    if not 1 <= seats <= MAX_PLAYERS:
        raise GameFault(f"game {name}: num_players: expected 1 to {MAX_PLAYERS}, got {seats:,}")
    if math.prod(shape) > MAX_OBSERVATION:
        raise GameFault(f"game {name}: observation_shape {shape}: expected at most {MAX_OBSERVATION:,} numbers")
    rules = call(name, "compiled_rules", game.compiled_rules) if offers(game, CompilesRules) else None
    for g in range(CHECK_GAMES):
        state = call(name, "initial_state", game.initial_state, np.random.default_rng([seed, g]))
        moves = np.random.default_rng([seed, g, 1])
        for ply in range(CHECK_PLIES):
            where = f" after {ply} random moves of game {g + 1}"
            check_planes(name, call(name, "encode", game.encode, state), shape, where)
            if call(name, "is_terminal", game.is_terminal, state):
                check_scores(name, call(name, "scores", game.scores, state), seats, where)
                if rules is not None:
                    _check_compiled(game, rules, name, state, where)
                break
            mask = check_mask(name, call(name, "legal_mask", game.legal_mask, state), actions, False, where)
            check_mover(name, call(name, "to_play", game.to_play, state), seats, where)
            action = int(moves.choice(np.flatnonzero(mask)))
            after = [
                call(name, "step", game.step, state, action, np.random.default_rng([seed, g, 2, ply])) for _ in "ab"
            ]
            if not _same(game, after[0][0], after[1][0]):
                raise GameFault(f"game {name}: step: two calls with the same seed gave different states{where}")
            if offers(game, StepsLegalMoves):  # search steps with it: it must move as `step` does
                rng = np.random.default_rng([seed, g, 2, ply])
                if not _same(game, call(name, "step_legal", game.step_legal, state, action, rng)[0], after[0][0]):
                    raise GameFault(f"game {name}: step_legal: moved otherwise than step{where}")
            if rules is not None:  # after the rules themselves passed here
                _check_compiled(game, rules, name, state, where)
            state = after[0][0]


def _check_compiled(game, rules, name: str, state, where: str) -> None:
    """A game's compiled rules (`compiled.py`) at `state`: its row and back is the state, and the row's
    mover, legal mask, planes and every legal move's next row are what the Python rules give (a chance
    move's too, its result drawn as `step` draws it). Search runs them unguarded, so a rule they get wrong
    would be a wrong search, not an error line."""
    if rules.chance is not None and (rules.draw is None or rules.outcome is None):
        raise GameFault(f"game {name}: compiled_rules: a game with `chance` moves offers `draw` and `outcome` too")
    row = np.asarray(call(name, "compiled_rules: to_row", rules.to_row, state))
    if row.shape != (rules.width,) or row.dtype != np.int64:
        raise GameFault(
            f"game {name}: compiled_rules: to_row: expected {rules.width} int64, got {row.shape} {row.dtype}"
        )
    if not _same(game, call(name, "compiled_rules: from_row", rules.from_row, row), state):
        raise GameFault(f"game {name}: compiled_rules: from_row(to_row(state)) is another state{where}")
    rows, nodes = np.stack([row, row]), np.array([0, 1])  # node 1: where each move's next row goes
    seat, mask = np.zeros(1, dtype=np.int64), np.zeros((2, game.num_actions), dtype=np.bool_)
    call(name, "compiled_rules: mover", rules.mover, rules.shape, rows, nodes, 1, seat)
    terminal = game.is_terminal(state)
    if seat[0] != (-1 if terminal else game.to_play(state)):
        raise GameFault(f"game {name}: compiled_rules: mover gave {seat[0]}, the rules another{where}")
    if terminal:
        return
    call(name, "compiled_rules: legal", rules.legal, rules.shape, rows, nodes, 1, mask)
    if not np.array_equal(mask[0], game.legal_mask(state)):
        raise GameFault(f"game {name}: compiled_rules: legal gave another mask than legal_mask{where}")
    planes = np.zeros((1, *game.observation_shape), dtype=np.float32)
    call(name, "compiled_rules: encode", rules.encode, rules.shape, rows, nodes, 1, planes)
    if not np.array_equal(planes[0], game.encode(state)):
        raise GameFault(f"game {name}: compiled_rules: encode gave other planes than encode{where}")
    if rules.encode_vectors is not None:
        vectors = np.zeros_like(planes)
        call(name, "compiled_rules: encode_vectors", rules.encode_vectors, rules.shape, rows, nodes, 1, vectors)
        board = game.observation_shape[0] - game.constant_planes()
        flat, full = vectors[0].reshape(len(vectors[0]), -1), planes[0].reshape(len(planes[0]), -1)
        if not (np.array_equal(flat[:board], full[:board]) and np.array_equal(flat[board:, 0], full[board:, 0])):
            raise GameFault(f"game {name}: compiled_rules: encode_vectors gave other planes than encode{where}")
    flag = np.zeros(1, dtype=np.bool_)
    for action in np.flatnonzero(mask[0]).tolist():
        move = np.array([action])
        if rules.chance is not None:
            call(name, "compiled_rules: chance", rules.chance, rules.shape, rows, nodes[:1], move, 1, flag)
        after, key = call(name, "step", game.step, state, action, np.random.default_rng(action))
        if bool(flag[0]) != (key is not None):
            said = "a random result" if flag[0] else "no random result (no `chance` says which do)"
            raise GameFault(f"game {name}: compiled_rules: chance says move {action} has {said}, step another{where}")
        if key is None:
            call(name, "compiled_rules: step", rules.step, rules.shape, rows, nodes[:1], move, nodes[1:], 1)
        else:
            drawn = _check_draws(rules, name, rows, action, key, where)
            keys = np.array([drawn], dtype=np.int64)
            call(name, "compiled_rules: outcome", rules.outcome, rules.shape, rows, nodes[:1], move, keys, nodes[1:], 1)
        if not _same(game, rules.from_row(rows[1]), after):
            raise GameFault(f"game {name}: compiled_rules: step of move {action} gave another state than step{where}")


def _check_draws(rules, name: str, rows: np.ndarray, action: int, key: tuple, where: str) -> tuple:
    """The compiled rules' draw of a chance move at `rows[0]` (Python's `draw`, and `draw_keys` where offered)
    from the generator `step` drew `key` with: the key `step` drew, of `key_width` ints."""
    drawn = call(name, "compiled_rules: draw", rules.draw, rows[0], np.random.default_rng(action))
    if drawn != key:
        raise GameFault(f"game {name}: compiled_rules: draw gave {drawn} where step drew {key}{where}")
    if len(key) != rules.key_width:
        raise GameFault(f"game {name}: compiled_rules: key_width is {rules.key_width}, step drew {key}{where}")
    if rules.draw_keys is not None:
        streams, keys = pcg64.streams([np.random.default_rng(action)]), np.zeros((1, len(key)), np.int64)
        first = np.zeros(1, np.int64)  # the row at node 0, drawn with stream 0
        call(name, "compiled_rules: draw_keys", rules.draw_keys, rules.shape, rows, first, streams, first, 1, keys)
        if (compiled := tuple(keys[0].tolist())) != key:
            raise GameFault(f"game {name}: compiled_rules: draw_keys gave {compiled} where step drew {key}{where}")
    return drawn


def check_planes(name: str, observation, shape: tuple, where: str = "", method: str = "encode") -> None:
    """`encode`'s planes have the game's `observation_shape` (`encode_batch`'s, one a state)."""
    if np.shape(observation) != shape:
        raise GameFault(
            f"game {name}: {method}: expected shape {shape} (observation_shape), got {np.shape(observation)}{where}"
        )
    if not np.isfinite(observation).all():  # else the network's answer is NaN, blamed on the network
        raise GameFault(f"game {name}: {method}: expected finite planes, got NaN or inf{where}")


def check_mask(name: str, mask, actions: int, empty_allowed: bool, where: str = "") -> np.ndarray:
    """A legal mask of one entry an action, with a legal move unless the game is over."""
    mask = np.asarray(mask)
    if mask.shape != (actions,):
        raise GameFault(f"game {name}: legal_mask: expected shape ({actions},), got {mask.shape}{where}")
    if not empty_allowed and not mask.any():
        raise GameFault(f"game {name}: legal_mask: no legal move in a state that is not terminal{where}")
    return mask


def check_mover(name: str, mover, seats: int, where: str = "") -> None:
    if not 0 <= int(mover) < seats:
        raise GameFault(f"game {name}: to_play: expected a seat 0 to {seats - 1}, got {mover}{where}")


def check_scores(name: str, scores, seats: int, where: str = "") -> None:
    """One finite score a seat, each in [-1, 1]."""
    scores = np.asarray(scores, dtype=float)
    if scores.shape != (seats,):
        raise GameFault(f"game {name}: scores: expected {seats} values, one a seat, got shape {scores.shape}{where}")
    if not np.isfinite(scores).all() or np.abs(scores).max() > 1:
        raise GameFault(
            f"game {name}: scores: expected finite values in [-1, 1], got {clip(str(scores.tolist()), 80)}{where}"
        )


def _same(game, a, b) -> bool:
    """Two states alike as the rest of the project sees them: whose move, finished or not, the planes."""
    if game.is_terminal(a) != game.is_terminal(b):
        return False
    if game.is_terminal(a):
        return np.array_equal(game.scores(a), game.scores(b), equal_nan=True)
    return game.to_play(a) == game.to_play(b) and np.array_equal(game.encode(a), game.encode(b), equal_nan=True)


def call(name: str, method: str, function, *args):
    """`function(*args)`; whatever it raises becomes one line naming the game and the method."""
    try:
        return function(*args)
    except GameFault:
        raise
    except Exception as err:  # the game's own code: any exception is its fault
        raise GameFault(f"game {name}: {method} raised {type(err).__name__}: {clip(str(err), 120)}") from None
