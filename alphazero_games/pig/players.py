"""Fixed Pig strategies that serve as oracles for two-player Pig: the optimal policy solved by value
iteration (Neller & Presser) and the classic "hold at 20". No search, no randomness. A network's own
policy head, read into the same kind of table, can then be scored against them exactly."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch

from alphazero_games.pig.rules import HOLD, ROLL, PigGame, PigState
from alphazero_games.pig.solver import solve_pig
from pipeline.agents.base import PositionAgent
from pipeline.nets.senet import SENet


@lru_cache(maxsize=4)
def optimal_rolls(goal: int) -> np.ndarray:
    """rolls[i, j, k]: roll with own score i, opponent score j, turn total k (solved once per process)."""
    return solve_pig(goal)[1]


def hold_at_rolls(goal: int, threshold: int) -> np.ndarray:
    i, _, k = np.meshgrid(np.arange(goal), np.arange(goal), np.arange(goal), indexing="ij")
    return (k < threshold) & (i + k < goal)


class PigPolicyAgent(PositionAgent):
    """Plays two-player Pig from a table: rolls[own score, opponent score, turn total] (build it with
    `pig_table_agent`)."""

    def __init__(self, game: PigGame, rolls: np.ndarray, name: str):
        super().__init__(game, name)
        self.rolls = rolls

    def choose(self, state, rng):
        own, other = state.scores[state.mover], state.scores[1 - state.mover]
        reached = own + state.turn_total >= self.game.goal  # holding wins, and is the only legal move
        return HOLD if reached or not self.rolls[own, other, state.turn_total] else ROLL


def pig_table_agent(game, name: str, hold_at: int | None = None) -> PigPolicyAgent:
    """The optimal player, or "hold at `hold_at`"; refuses anything but two-player Pig first."""
    if not isinstance(game, PigGame) or game.num_players != 2:
        raise ValueError(f"{name}: a Pig policy table needs two-player Pig, got {game.name}")
    rolls = optimal_rolls(game.goal) if hold_at is None else hold_at_rolls(game.goal, hold_at)
    return PigPolicyAgent(game, rolls, name)


def optimal_from_spec(game, spec) -> PigPolicyAgent:
    """`optimal`, as `AgentSpec` asks the players Pig brings (`rules.py`'s `TWO_PLAYER_PLAYERS`)."""
    return pig_table_agent(game, spec.name)


def hold_from_spec(game, spec) -> PigPolicyAgent:
    """`hold:N`: hold once the turn total reaches N (`spec.number`)."""
    if spec.number < 1:
        raise ValueError(f"{spec.name}: expected hold:N, N the turn total at which it holds")
    return pig_table_agent(game, spec.name, spec.number)


def network_rolls(game: PigGame, model: SENet, seat: int, batch: int = 8192) -> np.ndarray:
    """rolls[own score, opponent score, turn total] as the network's policy head picks them (no search)
    in `seat` of two-player Pig; the network sees its seat, so each seat has its own table."""
    g = game.goal
    keys = np.array([(i, j, k) for i in range(g) for j in range(g) for k in range(g - i)])
    picks = []
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(keys), batch):
            states = [
                PigState((i, j) if seat == 0 else (j, i), k, seat, 0, None) for i, j, k in keys[start : start + batch]
            ]
            logits = model(torch.from_numpy(game.encode_batch(states)))[0]
            legal = torch.from_numpy(np.stack([game.legal_mask(s) for s in states]))
            picks.append(logits.masked_fill(~legal, -torch.inf).argmax(dim=1).numpy() == ROLL)
    model.train(was_training)
    rolls = np.zeros((g, g, g), dtype=bool)
    rolls[keys[:, 0], keys[:, 1], keys[:, 2]] = np.concatenate(picks)
    return rolls
