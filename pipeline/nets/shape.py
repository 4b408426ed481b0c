"""A network's shape: what a checkpoint records and what a game asks of a network (seats, actions,
planes), in a module without torch so that a file's recorded shape is checked against its game before
torch's import."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline.games.base import HasConstantPlanes, offers


@dataclass(frozen=True)
class NetworkShape:
    in_channels: int
    rows: int
    cols: int
    num_actions: int
    num_players: int
    blocks: int = 4
    channels: int = 64
    se_reduction: int = 4
    constant_planes: int = 0  # the input's last planes, each one number over the whole board
    score_head: bool = False  # an auxiliary head predicting each seat's final points (`train.score_weight`)

    @property
    def board_planes(self) -> int:
        return self.in_channels - self.constant_planes

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def for_game(cls, game, blocks: int, channels: int, se_reduction: int, score_head: bool = False) -> NetworkShape:
        """A game that has constant planes (`HasConstantPlanes`: its encoding's last planes, constant over
        the board; Kingdomino's rows of dominoes, kings and phase) has them read as a vector."""
        constant = constant_planes(game)
        seats = game.num_players
        shape = (game.num_actions, seats, blocks, channels, se_reduction, constant, score_head)
        return cls(*game.observation_shape, *shape)

    @classmethod
    def for_params(cls, game, params) -> NetworkShape:
        """The shape a run's params ask for: its `network` section, and a score head where
        `train.score_weight` is above 0."""
        return cls.for_game(game, **params.network.model_dump(), score_head=params.train.score_weight > 0)


def constant_planes(game) -> int:
    """How many of the game's last planes are constant over the board (`HasConstantPlanes`), 0 if none."""
    return game.constant_planes() if offers(game, HasConstantPlanes) else 0
