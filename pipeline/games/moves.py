"""A position written as the moves played from the start, in the game's own notation: one character
a column for drop games (the Connect-4 test sets' `4453`), else moves separated by spaces or commas,
each read by the game's `parse_move`. A game whose chance events can be written (`parse_draw`:
Kingdomino's rows, `5-22-32-44`) takes them at the start and after the move that drew, and draws the
ones left unwritten in its fixed order; other games with chance are refused at the first roll."""

from __future__ import annotations

import re

import numpy as np

from pipeline.games.base import Game, IllegalMove, ReadsDraws, joins_moves


def move_texts(game: Game, line: str) -> list[str]:
    """A line's moves: one character a column for drop games (the test sets' notation), else words."""
    if joins_moves(game):
        words = line.split()
        return list(words[0]) if words else []
    return [word for word in re.split(r"[\s,]+", line.strip()) if word]


def read_position(game: Game, line: str):
    """The moves (as the game writes them) and the position they reach; IllegalMove if there is none."""
    writes_draws = isinstance(game, ReadsDraws)
    state, moves = game.initial_state(), []
    for text in move_texts(game, line):
        if writes_draws and (written := game.parse_draw(state, text)) is not None:
            state = written
            moves.append(game.format_draw(state))
            continue
        if game.is_terminal(state):
            raise IllegalMove(f"the game is over after {len(moves)} moves, before {text!r}")
        action = game.parse_move(state, text)
        state, chance = game.step(state, action, None if writes_draws else np.random.default_rng(0))
        if chance is not None and not writes_draws:
            raise IllegalMove(f"move {text!r} is decided by chance: {game.name} positions cannot be written as moves")
        moves.append(game.format_move(action))
    if game.is_terminal(state):
        raise IllegalMove("the game is over: nothing to analyse")
    return moves, state


def example_line(game: Game) -> str:
    """Two opening moves written as `read_position` reads them (`8 3`, `44`): the hint a person at a
    terminal gets; empty where the game's first moves cannot be written so."""
    state, moves = game.initial_state(), []
    for _ in range(2):
        legal = game.legal_actions(state)
        if game.is_terminal(state) or not legal:
            break
        action = legal[len(legal) // 2]
        moves.append(game.format_move(action))
        state, chance = game.step(state, action, np.random.default_rng(0))
        if chance is not None:
            break
    line = ("" if joins_moves(game) else " ").join(moves)
    try:
        read_position(game, line)
    except IllegalMove:
        return ""
    return line
