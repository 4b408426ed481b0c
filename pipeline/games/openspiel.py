"""Any OpenSpiel game with perfect information and sequential moves, behind our `Game` protocol, so a
user can train on an existing game library (`game: openspiel:backgammon` in params.yaml).

Chance nodes are resolved inside `step`: the outcomes drawn become the move's chance key, so search
builds its chance nodes (the Kingdomino notes) without reading OpenSpiel's probabilities. The network sees
OpenSpiel's observation tensor of the player to move; values are returns scaled into [-1, 1].
OpenSpiel is an optional dependency (`pip install open-spiel`).
"""

from __future__ import annotations

import numpy as np

from pipeline.games.base import IllegalMove, Symmetry


class SpielState:
    """An OpenSpiel state with value semantics: equal (and hashed) by its history, as tree reuse and
    the evaluator cache need; never mutated after construction."""

    __slots__ = ("state", "history")

    def __init__(self, state):
        self.state = state
        self.history = tuple(state.history())

    def __eq__(self, other) -> bool:
        return isinstance(other, SpielState) and self.history == other.history

    def __hash__(self) -> int:
        return hash(self.history)

    def __getstate__(self):
        return self.state, self.history

    def __setstate__(self, data) -> None:
        self.state, self.history = data


class OpenSpielGame:
    def __init__(self, game_string: str):
        self.name = f"openspiel:{game_string}"
        try:
            import pyspiel
        except ImportError:
            raise ValueError(f"game {self.name!r} needs OpenSpiel: pip install -e '.[openspiel]'") from None
        short = game_string.split("(")[0].strip()
        if short not in pyspiel.registered_names():
            raise ValueError(f"game {self.name!r}: OpenSpiel has no game {short!r}")
        try:
            self._game = pyspiel.load_game(game_string)
        except pyspiel.SpielError as err:
            raise ValueError(f"game {self.name!r}: {str(err).splitlines()[0]}") from None
        kind = self._game.get_type()
        problems = [
            (kind.information != pyspiel.GameType.Information.PERFECT_INFORMATION, "has hidden information"),
            (kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL, "has simultaneous moves"),
            (kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC, "samples chance without outcomes"),
            (not kind.provides_observation_tensor, "provides no observation tensor"),
        ]
        for failed, why in problems:
            if failed:
                raise ValueError(f"game {self.name!r} {why}; perfect-information sequential games only")
        self.num_players = self._game.num_players()
        self.num_actions = self._game.num_distinct_actions()
        shape = tuple(self._game.observation_tensor_shape())
        self.observation_shape = {1: (shape[0], 1, 1), 2: (1, *shape)}.get(len(shape), shape)
        self._scale = max(abs(self._game.min_utility()), abs(self._game.max_utility())) or 1.0

    def __repr__(self) -> str:
        return self.name

    # --- rules -------------------------------------------------------------------------------
    def _settle(self, state, rng) -> tuple:
        """Play chance nodes until a player is to move; return the outcomes drawn."""
        drawn = []
        while state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            index = int(np.searchsorted(np.cumsum(probabilities), rng.random() * sum(probabilities), side="right"))
            drawn.append(outcomes[min(index, len(outcomes) - 1)])
            state.apply_action(drawn[-1])
        return tuple(drawn)

    def initial_state(self, rng=None) -> SpielState:
        state = self._game.new_initial_state()
        self._settle(state, rng if rng is not None else np.random.default_rng())
        return SpielState(state)

    def legal_actions(self, state: SpielState) -> list[int]:
        return [] if state.state.is_terminal() else list(state.state.legal_actions())

    def legal_mask(self, state: SpielState) -> np.ndarray:
        mask = np.zeros(self.num_actions, dtype=bool)
        mask[self.legal_actions(state)] = True
        return mask

    def step(self, state: SpielState, action: int, rng=None) -> tuple[SpielState, tuple | None]:
        if action not in self.legal_actions(state):
            raise IllegalMove(f"{action} is not legal here")
        following = state.state.clone()
        following.apply_action(action)
        drawn = self._settle(following, rng)
        return SpielState(following), drawn or None

    def to_play(self, state: SpielState) -> int:
        return state.state.current_player()

    def ply(self, state: SpielState) -> int:
        return state.state.move_number()

    def is_terminal(self, state: SpielState) -> bool:
        return state.state.is_terminal()

    def scores(self, state: SpielState) -> np.ndarray:
        return np.asarray(state.state.returns(), dtype=np.float32) / self._scale

    def random_playout(self, state: SpielState, rng) -> np.ndarray:
        playing = state.state.clone()
        while not playing.is_terminal():
            playing.apply_action(int(rng.choice(playing.legal_actions())))
            self._settle(playing, rng)
        return np.asarray(playing.returns(), dtype=np.float32) / self._scale

    # --- network view ------------------------------------------------------------------------
    def encode(self, state: SpielState) -> np.ndarray:
        player = max(state.state.current_player(), 0)
        return np.asarray(state.state.observation_tensor(player), dtype=np.float32).reshape(self.observation_shape)

    def encode_batch(self, states: list[SpielState]) -> np.ndarray:
        return (
            np.stack([self.encode(s) for s in states]) if states else np.zeros((0, *self.observation_shape), np.float32)
        )

    def symmetries(self) -> list[Symmetry]:
        """OpenSpiel exposes no board symmetries: the identity only."""
        return [Symmetry(lambda x: x, np.arange(self.num_actions))]

    # --- people ------------------------------------------------------------------------------
    def render(self, state: SpielState) -> str:
        """OpenSpiel's own picture, then the number a person types for each legal move and OpenSpiel's
        name for it: 1-based, as the project's own games number their moves."""
        picture = str(state.state)
        if state.state.is_terminal() or state.state.is_chance_node():
            return picture
        player = state.state.current_player()
        moves = ", ".join(
            f"{self.format_move(a)} {state.state.action_to_string(player, a)}" for a in self.legal_actions(state)
        )
        return f"{picture}\nmoves: {moves}"

    def parse_move(self, state: SpielState, text: str) -> int:
        """A legal action's number, 1-based, or OpenSpiel's name for it."""
        word = text.strip()
        player = state.state.current_player()
        for action in self.legal_actions(state):
            if word in (self.format_move(action), state.state.action_to_string(player, action)):
                return action
        raise IllegalMove(f"{word!r} is not a legal move here")

    def format_move(self, action: int) -> str:
        return str(action + 1)
