"""The SENet as a Lightning module with Petosa & Balch's loss: mean over seats of (z - v)^2 plus the
policy cross-entropy against the search's visit distribution; L2 enters as Adam's weight decay. With
`score_weight` > 0, plus that weight times the score head's squared error on the final points."""

from __future__ import annotations

import time
from typing import NamedTuple

import pytorch_lightning as pl
import torch
import torch.nn.functional as F

from pipeline.nets.senet import SENet


class Losses(NamedTuple):
    """A batch's mean losses; `score` is 0 where no score targets were given."""

    policy: torch.Tensor
    value: torch.Tensor
    score: torch.Tensor


def alphazero_losses(
    model: SENet,
    states: torch.Tensor,
    policies: torch.Tensor,
    values: torch.Tensor,
    weights: torch.Tensor | None = None,
    scores: torch.Tensor | None = None,
) -> Losses:
    """The batch's mean losses, each sample counted by its weight (merged positions weigh by their copies);
    with `scores`, the score head's squared error on them too (a network with a score head)."""
    if scores is None:
        logits, predicted = model(states)
    else:
        logits, predicted, points = model.forward_with_scores(states)
    per_sample = [
        -(policies * F.log_softmax(logits, dim=-1)).sum(dim=-1),
        ((values - predicted) ** 2).mean(dim=-1),
        *([] if scores is None else [((scores - points) ** 2).mean(dim=-1)]),
    ]
    if weights is not None:
        per_sample = [weights * loss for loss in per_sample]
    means = [loss.mean() for loss in per_sample]
    return Losses(*means) if scores is not None else Losses(*means, means[0].new_zeros(()))


def make_optimizer(model: SENet, learning_rate: float, weight_decay: float) -> torch.optim.Optimizer:
    """Adam with L2 as weight decay (Petosa & Balch), updating all tensors per step in one multi-tensor call."""
    return torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay, foreach=True)


class AlphaZeroModule(pl.LightningModule):
    def __init__(
        self,
        model: SENet,
        learning_rate: float = 1e-3,
        weight_decay: float = 1e-4,
        lr_schedule: str = "constant",
        score_weight: float = 0.0,
    ):
        super().__init__()
        if score_weight > 0 and model.score_head is None:
            raise ValueError("train.score_weight: the network has no score head (its shape's score_head is false)")
        self.model = model
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.lr_schedule = lr_schedule
        self.score_weight = score_weight
        self.history: list[dict[str, float]] = []  # mean losses and wall seconds of each epoch

    def on_train_epoch_start(self):
        self._sums = torch.zeros(3, device=self.device)  # beside the losses, on the GPU when training there
        self._batches = 0
        self._started = time.perf_counter()

    def training_step(self, batch, batch_idx):
        states, policies, values, weights, scores = batch
        losses = alphazero_losses(
            self.model, states, policies, values, weights, scores if self.score_weight > 0 else None
        )
        # Sum here and log once per epoch: Lightning's per-step `log` costs as much as a small model's step.
        self._sums += torch.stack([loss.detach() for loss in losses])
        self._batches += 1
        return losses.policy + losses.value + self.score_weight * losses.score

    def on_train_epoch_end(self):
        self.record_epoch()

    def record_epoch(self) -> None:
        """This epoch's mean losses and seconds into `history`, once: callbacks' epoch-end hooks run
        before this module's, and the one that saves the fit needs the epoch recorded."""
        if len(self.history) > self.current_epoch:
            return
        policy_loss, value_loss, score_loss = (self._sums / max(self._batches, 1)).tolist()
        losses = {"policy_loss": policy_loss, "value_loss": value_loss, "loss": policy_loss + value_loss}
        if self.score_weight > 0:
            losses["score_loss"] = score_loss
        self.history.append({**losses, "seconds": time.perf_counter() - self._started})
        self.log_dict(losses, prog_bar=True)

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["history"] = self.history  # a resumed fit reports every epoch, not only its own

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        self.history = checkpoint["history"]

    def configure_optimizers(self):
        """`cosine` anneals the rate to 0 over this fit's steps: each generation restarts it (SGDR), so the
        network that plays next is taken at a low rate, not mid-step at the full one."""
        optimizer = make_optimizer(self.model, self.learning_rate, self.weight_decay)
        if self.lr_schedule == "constant":
            return optimizer
        steps = max(1, int(self.trainer.estimated_stepping_batches))
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
