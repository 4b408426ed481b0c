"""Pig, the dice game, for 2 to 6 players: on your turn roll a die as often as you like, adding the
pips to a turn total, or hold to bank it; a 1 loses the turn total and the turn. First to `goal` wins.

Rules as OpenSpiel's `pig` (action 0 rolls, 1 holds; once banked score plus turn total reach the goal
the only move is to hold). A roll's chance key is the face shown; holding is deterministic.
"""

from __future__ import annotations

import random
from typing import NamedTuple

import numpy as np

from pipeline.games.base import IllegalMove, Symmetry, win_loss_scores

ROLL, HOLD = 0, 1
# A goal's points are the board's width, and a game lasts about goal / 4 turns a player: at 1,000 a
# network reads 13,000 cells and a game about 2,000 moves; 10^12 asked for 40 TB and never began.
MAX_GOAL = 1_000
# What two-player Pig brings besides its rules (`base.py`'s `BringsPlayers`, `BringsExperiments`):
# the optimal policy by value iteration and "hold at N" (Neller & Presser), and the oracle they make.
TWO_PLAYER_PLAYERS = {
    "optimal": "alphazero_games.pig.players:optimal_from_spec",
    "hold": "alphazero_games.pig.players:hold_from_spec",
}
TWO_PLAYER_EXPERIMENTS = ("alphazero_games.pig.oracle:EXPERIMENT",)


class PigState(NamedTuple):
    scores: tuple[int, ...]  # banked points per absolute seat
    turn_total: int
    mover: int
    ply: int
    winner: int | None


class PigGame:
    num_actions = 2

    def __init__(self, num_players: int = 2, goal: int = 100):
        if not 2 <= num_players <= 6:
            raise ValueError(f"pig: players must be 2 to 6, got {num_players}")
        if not 2 <= goal <= MAX_GOAL:
            raise ValueError(f"pig: goal must be 2 to {MAX_GOAL:,}, got {goal:,}")
        self.num_players, self.goal = num_players, goal
        self.name = f"pig(players={num_players},goal={goal})"
        self.observation_shape = (2 * num_players + 1, 1, goal)

    def __repr__(self) -> str:
        return self.name

    # --- rules -------------------------------------------------------------------------------
    def players(self) -> dict[str, str]:
        return TWO_PLAYER_PLAYERS if self.num_players == 2 else {}

    def experiments(self) -> tuple[str, ...]:
        return TWO_PLAYER_EXPERIMENTS if self.num_players == 2 else ()

    def solver(self) -> str | None:
        return "alphazero_games.pig.solve_command:main" if self.num_players == 2 else None

    def initial_state(self, rng=None) -> PigState:
        return PigState((0,) * self.num_players, 0, 0, 0, None)

    def legal_actions(self, state: PigState) -> list[int]:
        if state.winner is not None:
            return []
        if state.scores[state.mover] + state.turn_total >= self.goal:
            return [HOLD]
        return [ROLL, HOLD]

    def legal_mask(self, state: PigState) -> np.ndarray:
        mask = np.zeros(2, dtype=bool)
        mask[self.legal_actions(state)] = True
        return mask

    def step(self, state: PigState, action: int, rng) -> tuple[PigState, int | None]:
        """`rng` rolls the die: anything with numpy's `integers(low, high)`."""
        if action not in self.legal_actions(state):
            raise IllegalMove(f"{self.format_move(action) if action in (0, 1) else action} is not legal here")
        return self.apply(state, action, int(rng.integers(1, 7)) if action == ROLL else None)

    def apply(self, state: PigState, action: int, face: int | None) -> tuple[PigState, int | None]:
        """The move with a given die face (None when holding)."""
        mover, ply, following = state.mover, state.ply + 1, (state.mover + 1) % self.num_players
        if action == HOLD:
            banked = state.scores[mover] + state.turn_total
            scores = state.scores[:mover] + (banked,) + state.scores[mover + 1 :]
            winner = mover if banked >= self.goal else None
            return PigState(scores, 0, mover if winner is not None else following, ply, winner), None
        if face == 1:
            return PigState(state.scores, 0, following, ply, None), face
        return PigState(state.scores, state.turn_total + face, mover, ply, None), face

    def to_play(self, state: PigState) -> int:
        return state.mover

    def ply(self, state: PigState) -> int:
        return state.ply

    def is_terminal(self, state: PigState) -> bool:
        return state.winner is not None

    def scores(self, state: PigState) -> np.ndarray:
        return win_loss_scores(self.num_players, state.winner)

    def margins(self, state: PigState) -> np.ndarray:
        """Banked points: the margin for value schemes that reward bigger wins."""
        return np.array(state.scores, dtype=np.float64)

    def margin_scale(self) -> float:
        return float(self.goal)  # a whole game's points apart: the clearest win

    def random_playout(self, state: PigState, rng: random.Random) -> np.ndarray:
        scores, total, mover, winner = list(state.scores), state.turn_total, state.mover, state.winner
        while winner is None:
            if scores[mover] + total >= self.goal or rng.random() < 0.5:
                scores[mover] += total
                if scores[mover] >= self.goal:
                    winner = mover
                total, mover = 0, (mover + 1) % self.num_players if winner is None else mover
            else:
                face = rng.randint(1, 6)
                if face == 1:
                    total, mover = 0, (mover + 1) % self.num_players
                else:
                    total += face
        return win_loss_scores(self.num_players, winner)

    # --- network view ------------------------------------------------------------------------
    def encode(self, state: PigState) -> np.ndarray:
        return self.encode_batch([state])[0]

    def encode_batch(self, states: list[PigState]) -> np.ndarray:
        """A strip of `goal` cells: each seat's banked score as a thermometer in turn order from the
        mover, then the mover's score with the turn total, then the mover's seat one-hot."""
        p, cells = self.num_players, np.arange(self.goal)
        planes = np.zeros((len(states), 2 * p + 1, 1, self.goal), dtype=np.float32)
        for n, s in enumerate(states):
            for k in range(p):
                planes[n, k, 0] = cells < s.scores[(s.mover + k) % p]
            planes[n, p, 0] = cells < s.scores[s.mover] + s.turn_total
            planes[n, p + 1 + s.mover] = 1.0
        return planes

    def symmetries(self) -> list[Symmetry]:
        return [Symmetry(lambda x: x, np.arange(2))]

    # --- people ------------------------------------------------------------------------------
    def render(self, state: PigState) -> str:
        banked = "  ".join(f"seat {i}: {s}" for i, s in enumerate(state.scores))
        return f"{banked}\nseat {state.mover} to move, turn total {state.turn_total}"

    def parse_move(self, state: PigState, text: str) -> int:
        word = text.strip().lower()
        action = {"r": ROLL, "roll": ROLL, "h": HOLD, "hold": HOLD}.get(word)
        if action is None:
            raise IllegalMove(f"expected roll (r) or hold (h), got {text.strip()!r}")
        if action not in self.legal_actions(state):
            raise IllegalMove(f"{word} is not legal here: the goal is reached, hold")
        return action

    def format_move(self, action: int) -> str:
        return "roll" if action == ROLL else "hold"


def pig(players: int = 2, goal: int = 100) -> PigGame:
    """The registered game (pyproject.toml's `alphazero_pipeline.games`): `pig(players=3,goal=50)`."""
    return PigGame(players, goal)
