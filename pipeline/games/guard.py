"""A user's game checked at every call, not only in the contract's first random games
(`contract.check_contract`): a fault that shows at move 5,000 (a step that raises, an empty legal mask,
a seat out of range, planes of another shape, scores that are not finite) is one line naming the game
and the method, where it was a traceback of 33 to 369 lines from deep in search or ONNX Runtime. The
arena adds the move. The project's own games are tested instead, and run unguarded at full speed.

The guard is a subclass of the game's own class, so that every ability the game offers
(`games.base.offers` asks the class) is still offered; pickling sends the game's own class."""

from __future__ import annotations

import copy
from functools import cache

import numpy as np

from pipeline.games.base import StepsLegalMoves, class_offers
from pipeline.games.contract import call, check_mask, check_mover, check_planes, check_scores, ply_cap
from pipeline.plumbing.clip import quoted
from pipeline.plumbing.failures import GameFault


class Guarded:
    """The contract's methods, each calling the game's own and checking what it gave back."""

    @property
    def _label(self) -> str:
        """The game's name as the error lines quote it, made once: every guarded call passes it."""
        if (label := self.__dict__.get("_quoted_name")) is None:
            label = self.__dict__["_quoted_name"] = quoted(self.name)
        return label

    def initial_state(self, rng=None):
        return call(self._label, "initial_state", super().initial_state, rng)

    def step(self, state, action, rng=None):
        if (playout := self.__dict__.get("_playout")) is not None:  # a move of the game's own random_playout
            playout[0] += 1
            if playout[0] > playout[1]:
                raise GameFault(
                    f"game {self._label}: random_playout: no end after {playout[1]:,} moves (expected a "
                    "game to end within its cap; a longer game declares max_plies)"
                )
        return call(self._label, "step", super().step, state, action, rng)

    def _step_legal(self, state, action, rng=None):  # `step_legal`, where the game offers it
        return call(self._label, "step_legal", super().step_legal, state, action, rng)

    def is_terminal(self, state):
        return call(self._label, "is_terminal", super().is_terminal, state)

    def legal_mask(self, state):
        mask = np.asarray(call(self._label, "legal_mask", super().legal_mask, state))
        if mask.shape != (self.num_actions,) or not mask.any():  # else nothing to say, in one look
            check_mask(self._label, mask, self.num_actions, empty_allowed=self.is_terminal(state))
        return mask

    def to_play(self, state):
        mover = call(self._label, "to_play", super().to_play, state)
        check_mover(self._label, mover, self.num_players)
        return mover

    def encode(self, state):
        planes = call(self._label, "encode", super().encode, state)
        check_planes(self._label, planes, tuple(self.observation_shape))
        return planes

    def encode_batch(self, states):
        planes = call(self._label, "encode_batch", super().encode_batch, states)
        check_planes(self._label, planes, (len(states), *self.observation_shape), method="encode_batch")
        return planes

    def legal_actions(self, state):
        return call(self._label, "legal_actions", super().legal_actions, state)

    def random_playout(self, state, rng):
        """The game's own playout, its moves counted through `step`: one that never ends (UCT's rollouts
        of a game whose end never comes) stops at the game's cap instead of running for ever."""
        self._playout = [0, ply_cap(self)]
        try:
            scores = call(self._label, "random_playout", super().random_playout, state, rng)
        finally:
            self._playout = None
        check_scores(self._label, scores, self.num_players)
        return scores

    def scores(self, state):
        scores = call(self._label, "scores", super().scores, state)
        check_scores(self._label, scores, self.num_players)
        return scores

    def __reduce_ex__(self, protocol):
        guarded = type(self)
        self.__class__ = guarded.__bases__[1]
        try:
            return guard, (copy.copy(self),)
        finally:
            self.__class__ = guarded


def guard(game):
    """`game`, checked at every call from now on (a plugin's, after its contract check)."""
    game.__class__ = _guarded_class(type(game))
    return game


@cache
def _guarded_class(cls: type) -> type:
    offered = {"step_legal": Guarded._step_legal} if class_offers(cls, StepsLegalMoves) else {}  # where it is
    return type(cls.__name__, (Guarded, cls), {"__module__": cls.__module__, **offered})
