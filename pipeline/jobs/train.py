"""Fit the network on replay samples with Lightning; the Trainer is set up for small models (no
checkpointing or summaries, metrics once per epoch) so the framework costs little over a bare loop,
and quiet: its start-up notices would repeat in every stage."""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pytorch_lightning as pl
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset

from pipeline.config import TrainParams
from pipeline.jobs.replay import augment, merge_positions
from pipeline.nets.module import AlphaZeroModule
from pipeline.nets.senet import SENet
from pipeline.threads import follow_free_cores


@dataclass
class TrainResult:
    policy_loss: float
    value_loss: float
    samples: int
    samples_per_s: float
    epoch_losses: list[dict[str, float]]


# Lightning's info lines ("GPU available", "TPU available", the litlogger tip, "`Trainer.fit` stopped")
# go through these loggers; its warnings still show.
LIGHTNING_NOTICES = ("pytorch_lightning.utilities.rank_zero", "lightning.pytorch.utilities.rank_zero")
# Lightning 2.6 (the newest release) builds a torch `LeafSpec` whenever it wraps a training loader, which
# torch 2.13 deprecates: a FutureWarning in every stage that no change of ours can avoid, and harmless.
LEAFSPEC_DEPRECATION = r"`isinstance\(treespec, LeafSpec\)` is deprecated"


class _FollowFreeCores(pl.Callback):
    def on_train_batch_start(self, *args) -> None:
        follow_free_cores()


class _WholeBatches(torch.utils.data.Dataset):
    def __init__(self, dataset: TensorDataset):
        self.tensors = dataset.tensors

    def __len__(self) -> int:
        return len(self.tensors[0])

    def __getitem__(self, indices):
        return tuple(t[indices] for t in self.tensors)


ACCELERATORS = {"auto": "auto", "cpu": "cpu", "cuda": "gpu"}  # params' device -> Lightning's accelerator


def train_network(
    game,
    model: SENet,
    samples: dict[str, np.ndarray],
    params: TrainParams,
    seed: int,
    logger=None,
    progress=True,
    device: str = "auto",
) -> TrainResult:
    pl.seed_everything(seed, workers=True, verbose=False)
    if params.merge_positions:
        samples = merge_positions(samples)
    if params.augment:
        samples = augment(game, samples)
    weights = samples.get("weights", np.ones(len(samples["states"]), dtype=np.float32))
    dataset = TensorDataset(
        torch.from_numpy(samples["states"].astype(np.float32)),
        torch.from_numpy(samples["policies"]),
        torch.from_numpy(samples["values"]),
        torch.from_numpy(weights),
    )
    # Whole batches by one tensor index each (not per-sample collation): the bare loop's cost.
    sampler = BatchSampler(
        RandomSampler(dataset, generator=torch.Generator().manual_seed(seed)), params.batch_size, False
    )
    loader = DataLoader(_WholeBatches(dataset), sampler=sampler, batch_size=None)
    module = AlphaZeroModule(model, params.learning_rate, params.weight_decay, params.lr_schedule)
    for name in LIGHTNING_NOTICES:
        logging.getLogger(name).setLevel(logging.WARNING)
    trainer = pl.Trainer(
        max_epochs=params.epochs,
        accelerator=ACCELERATORS[device],
        devices=1,
        logger=logger if logger is not None else False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=progress,
        log_every_n_steps=max(1, len(loader)),
        num_sanity_val_steps=0,
        callbacks=[_FollowFreeCores()],
    )
    started = time.perf_counter()
    model.train()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", LEAFSPEC_DEPRECATION, FutureWarning)
        trainer.fit(module, loader)
    seconds = time.perf_counter() - started
    model.cpu().eval()
    last = module.history[-1]
    return TrainResult(
        policy_loss=last["policy_loss"],
        value_loss=last["value_loss"],
        samples=len(dataset),
        samples_per_s=len(dataset) * params.epochs / seconds,
        epoch_losses=module.history,
    )
