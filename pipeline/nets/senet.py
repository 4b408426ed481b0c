"""Petosa & Balch's network: pre-activation residual blocks with squeeze-and-excitation, a policy head and
a value head with one tanh output per seat (index 0 = the player to move); optionally a score head, one
linear output per seat, trained on the game's final points as an auxiliary target (KataGo) and never
read by search."""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from pipeline.nets.shape import NetworkShape


class SqueezeExcitation(nn.Module):
    """Rescale channels by a gate computed from their global averages (Hu et al. 2018)."""

    def __init__(self, channels: int, reduction: int):
        super().__init__()
        hidden = max(channels // reduction, 1)
        self.gate = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Linear(channels, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, channels),
            nn.Sigmoid(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gate(x)[:, :, None, None]


class PreActSEBlock(nn.Module):
    """BN-ReLU-conv twice, squeeze-and-excitation, then the identity shortcut (SE-PRE block)."""

    def __init__(self, channels: int, reduction: int):
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(channels, channels, 3, padding=1, bias=False),
            SqueezeExcitation(channels, reduction),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x)


class SENet(nn.Module):
    def __init__(self, shape: NetworkShape):
        super().__init__()
        self.shape = shape
        c, cells = shape.channels, shape.rows * shape.cols
        self.stem = nn.Conv2d(shape.board_planes, c, 3, padding=1, bias=False)
        # a plane that is one number everywhere needs no 3x3 kernel: one weight per channel, added
        # everywhere (Kingdomino's 150 such planes made the convolution cost as much as the tower)
        self.constant_stem = nn.Linear(shape.constant_planes, c, bias=False) if shape.constant_planes else None
        self.tower = nn.Sequential(
            *[PreActSEBlock(c, shape.se_reduction) for _ in range(shape.blocks)],
            nn.BatchNorm2d(c),
            nn.ReLU(inplace=True),
        )
        self.policy_head = nn.Sequential(
            nn.Conv2d(c, 2, 1, bias=False),
            nn.BatchNorm2d(2),
            nn.ReLU(inplace=True),
            nn.Flatten(),
            nn.Linear(2 * cells, shape.num_actions),
        )
        self.value_head = nn.Sequential(*_seat_head(c, cells, shape.num_players), nn.Tanh())
        self.score_head = _seat_head(c, cells, shape.num_players) if shape.score_head else None

    @classmethod
    def from_weights(cls, shape: dict, weights: dict) -> SENet:
        """The network in eval mode from a shape's fields and its state dict, whose values may be numpy
        arrays (an `AgentSpec` carries them so, to cross into processes that have no torch)."""
        model = cls(NetworkShape(**shape))
        model.load_state_dict({name: torch.as_tensor(value) for name, value in weights.items()})
        return model.eval()

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The stem: the board planes convolved, plus the constant planes' vector on every square."""
        if self.constant_stem is None:
            return self.stem(x)
        board = self.shape.board_planes
        return self.stem(x[:, :board]) + self.constant_stem(x[:, board:, 0, 0])[:, :, None, None]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.tower(self.embed(x))
        return self.policy_head(features), self.value_head(features)

    def forward_with_scores(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Policy logits, values and the score head's points (training only: search calls `forward`)."""
        features = self.tower(self.embed(x))
        return self.policy_head(features), self.value_head(features), self.score_head(features)


def _seat_head(channels: int, cells: int, seats: int) -> nn.Sequential:
    """One linear output per seat from the tower: the value head adds a tanh, the score head does not
    (points are not bounded to [-1, 1])."""
    return nn.Sequential(
        nn.Conv2d(channels, 1, 1, bias=False),
        nn.BatchNorm2d(1),
        nn.ReLU(inplace=True),
        nn.Flatten(),
        nn.Linear(cells, channels),
        nn.ReLU(inplace=True),
        nn.Linear(channels, seats),
    )


def initial_network(game, params) -> SENet:
    """The random generation-0 network of a run (`params`: the loaded params.yaml): the shape of its
    `network` section, weights seeded by its `seed`; as the `init` stage makes it and a sweep trial
    starts from."""
    torch.manual_seed(params.seed)
    return SENet(NetworkShape.for_params(game, params))


def deepened(model: SENet, blocks: int) -> SENet:
    """`model` with identity blocks appended to its tower up to `blocks`: the same function, more room.
    A new block's last convolution starts at zero, so its residual branch adds nothing until training
    moves it (Net2Net's deeper network; Goyal et al.'s zero-initialised residual branch): a bigger net
    goes on from a plateaued small one instead of starting from random weights."""
    if blocks < model.shape.blocks:
        raise ValueError(f"blocks: {blocks} is fewer than the {model.shape.blocks} blocks of the network")
    grown = SENet(replace(model.shape, blocks=blocks))
    weights = grown.state_dict()  # the new blocks' own initial weights, then the trained ones over them
    old = model.shape.blocks
    weights.update({_moved_tower_key(key, old, blocks): value for key, value in model.state_dict().items()})
    for index in range(old, blocks):
        weights[f"tower.{index}.body.5.weight"].zero_()
    grown.load_state_dict(weights)
    return grown.train(model.training)


def with_constant_planes(model: SENet, constant_planes: int) -> SENet:
    """`model` (a plain stem) reading its last `constant_planes` input planes as a vector: each output
    channel's weight for such a plane is the sum of its 3x3 kernel over it, which is what the
    convolution added on every square but the board's edge (where zero padding cut the kernel). A run
    goes on from a network trained before the game declared its constant planes."""
    if model.shape.constant_planes:
        raise ValueError("constant_planes: the network already reads its constant planes as a vector")
    shaped = SENet(replace(model.shape, constant_planes=constant_planes))
    weights = model.state_dict()
    kernels = weights.pop("stem.weight")
    board = shaped.shape.board_planes
    weights["stem.weight"] = kernels[:, :board].clone()
    weights["constant_stem.weight"] = kernels[:, board:].sum(dim=(2, 3))
    shaped.load_state_dict(weights)
    return shaped.train(model.training)


def with_score_head(model: SENet, score_head: bool) -> SENet:
    """`model` with a fresh score head (seeded by the caller's torch seed), or without its own: the rest
    of the network as trained. A run with `train.score_weight` goes on from a network trained without
    one, and back."""
    shaped = SENet(replace(model.shape, score_head=score_head))
    weights = {key: value for key, value in model.state_dict().items() if not key.startswith("score_head.")}
    if score_head:
        weights.update({k: v for k, v in shaped.state_dict().items() if k.startswith("score_head.")})
    shaped.load_state_dict(weights)
    return shaped.train(model.training)


def _moved_tower_key(key: str, old_blocks: int, new_blocks: int) -> str:
    """The tower's closing batch norm sits after the blocks: its index moves with their number."""
    prefix = f"tower.{old_blocks}."
    return f"tower.{new_blocks}." + key[len(prefix) :] if key.startswith(prefix) else key
