"""Fit the network on replay samples with Lightning; the Trainer is set up for small models (no
summaries, metrics once per epoch, Lightning's own checkpointing off) so the framework costs little
over a bare loop, and quiet: its start-up notices would repeat in every stage. A stage's fit is saved
after every epoch, so a stopped stage goes on from its last finished epoch."""

from __future__ import annotations

import hashlib
import logging
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader

from pipeline.config import TrainParams
from pipeline.games.base import Symmetry
from pipeline.jobs.replay import Augmented, merge_positions
from pipeline.jobs.work_key import work_key
from pipeline.nets.checkpoint import weights_digest
from pipeline.nets.denormals import flush_denormals
from pipeline.nets.module import AlphaZeroModule
from pipeline.nets.senet import SENet
from pipeline.plumbing.atomic import atomic_path
from pipeline.plumbing.progress import interactive, log_line
from pipeline.plumbing.threads import follow_free_cores

log = logging.getLogger(__name__)


@dataclass
class TrainResult:
    policy_loss: float
    value_loss: float
    samples: int
    samples_per_s: float
    epoch_losses: list[dict[str, float]]
    score_loss: float | None = None  # the score head's, where `score_weight` trains one


# Lightning's info lines ("GPU available", "TPU available", the litlogger tip, "`Trainer.fit` stopped")
# go through these loggers; its warnings still show.
LIGHTNING_NOTICES = ("pytorch_lightning.utilities.rank_zero", "lightning.pytorch.utilities.rank_zero")
# Lightning 2.6 (the newest release) builds a torch `LeafSpec` whenever it wraps a training loader, which
# torch 2.13 deprecates: a FutureWarning in every stage that no change of ours can avoid, and harmless.
LEAFSPEC_DEPRECATION = r"`isinstance\(treespec, LeafSpec\)` is deprecated"


class _FollowFreeCores(pl.Callback):
    def on_train_batch_start(self, *args) -> None:
        follow_free_cores()


BATCH = ("states", "policies", "values", "weights", "scores")  # `alphazero_losses`' arguments, in order


class _WholeBatches(torch.utils.data.Dataset):
    """A batch by one index array (not per-sample collation: the bare loop's cost), augmented as drawn."""

    def __init__(self, samples: Augmented):
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, indices):
        batch = self.samples.batch(indices)
        batch["states"] = batch["states"].astype(np.float32)
        return tuple(torch.from_numpy(batch[name]) for name in BATCH)


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
    resume: Path | None = None,
) -> TrainResult:
    """Fit `model` on `samples`. With a `resume` folder the fit's state is saved there after every
    epoch and a fit of the same inputs found there goes on from it: a stopped stage loses at most an
    epoch, and goes on as an uncut fit would (bit for bit at a fixed thread count)."""
    saved = None
    if resume is not None:
        digest = hashlib.sha256()
        for name in sorted(samples):  # the arrays' own buffers: a copy of a large window costs gigabytes
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(samples[name]).data)
        identity = {"train": params.model_dump(mode="json"), "seed": seed, "samples": digest.hexdigest()}
        saved = Path(resume) / f"fit.{work_key({**identity, 'weights': weights_digest(model.state_dict())})}.ckpt"
    pl.seed_everything(seed, workers=True, verbose=False)
    flush_denormals()  # weight decay would leave denormal weights, tens of times slower to compute with
    if params.merge_positions:
        samples = merge_positions(samples)
    samples = {
        "states": samples["states"],  # as stored (uint8 planes in most games): float32 batch by batch
        "policies": samples["policies"],
        "values": samples["values"],
        "weights": samples.get("weights", np.ones(len(samples["states"]), dtype=np.float32)),
        "scores": samples["scores"],
    }
    identity = Symmetry(lambda x: x, np.arange(game.num_actions))
    dataset = Augmented(samples, game.symmetries() if params.augment else [identity])
    if params.augment == "random":
        sampler = EpochBatches(dataset.count, params.batch_size, seed, views=len(dataset.symmetries))
    else:
        sampler = EpochBatches(len(dataset), params.batch_size, seed)
    loader = DataLoader(_WholeBatches(dataset), sampler=sampler, batch_size=None)
    module = AlphaZeroModule(model, params.learning_rate, params.weight_decay, params.lr_schedule, params.score_weight)
    for name in LIGHTNING_NOTICES:
        logging.getLogger(name).setLevel(logging.WARNING)
    trainer = pl.Trainer(
        max_epochs=params.epochs,
        accelerator=ACCELERATORS[device],
        devices=1,
        logger=logger if logger is not None else False,
        enable_checkpointing=False,
        enable_model_summary=False,
        enable_progress_bar=progress and interactive(),
        log_every_n_steps=max(1, len(loader)),
        num_sanity_val_steps=0,
        callbacks=[_FollowFreeCores(), _SamplerEpoch(sampler)]
        + ([_EpochCheckpoint(saved)] if saved else [])
        + ([_EpochLines()] if progress and not interactive() else []),
    )
    model.train()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", LEAFSPEC_DEPRECATION, FutureWarning)
        finished = _finished_epochs(saved) if saved else 0
        sampler.epoch = finished  # its first iterator is made before any epoch-start hook runs
        trainer.fit(module, loader, ckpt_path=saved if finished else None, weights_only=True)
    model.cpu().eval()
    last = module.history[-1]
    return TrainResult(
        policy_loss=last["policy_loss"],
        value_loss=last["value_loss"],
        samples=sampler.size,
        samples_per_s=sampler.size * params.epochs / sum(epoch["seconds"] for epoch in module.history),
        epoch_losses=module.history,
        score_loss=last.get("score_loss"),
    )


class EpochBatches(torch.utils.data.Sampler):
    """Batches of indices in an order drawn from (`seed`, `epoch`), the epoch set by `_SamplerEpoch`
    from the trainer's own count, so a fit resumed at epoch e draws the batches an uncut fit would.
    (Lightning's `set_epoch` counts differently after a restore.) With `views` (an `Augmented` set's
    symmetries), each of the `size` samples comes once an epoch, under a view drawn for it: index
    view * size + i."""

    def __init__(self, size: int, batch_size: int, seed: int, views: int = 1):
        self.size, self.batch_size, self.seed, self.views, self.epoch = size, batch_size, seed, views, 0

    def __len__(self) -> int:
        return -(-self.size // self.batch_size)

    def __iter__(self):
        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        order = torch.randperm(self.size, generator=generator)
        if self.views > 1:
            order += self.size * torch.randint(self.views, (self.size,), generator=generator)
        order = order.tolist()
        return (order[i : i + self.batch_size] for i in range(0, self.size, self.batch_size))


class _SamplerEpoch(pl.Callback):
    def __init__(self, sampler: EpochBatches):
        self.sampler = sampler

    def on_train_epoch_start(self, trainer, module) -> None:
        self.sampler.epoch = trainer.current_epoch


class _EpochLines(pl.Callback):
    """Outside a terminal, where Lightning's bar would be one line rewritten in place: a line per
    epoch with its losses, its seconds and the time left."""

    def on_train_epoch_end(self, trainer, module) -> None:
        module.record_epoch()
        epoch, done = module.history[-1], len(module.history)
        left = (trainer.max_epochs - done) * epoch["seconds"]
        log_line(
            f"train: epoch {done}/{trainer.max_epochs}  policy loss {epoch['policy_loss']:.4f}  "
            f"value loss {epoch['value_loss']:.4f}  {epoch['seconds']:.1f} s  about {left:.0f} s left"
        )


class _EpochCheckpoint(pl.Callback):
    """The fit's state (weights, optimizer, schedule, epoch, losses) after every epoch, written whole."""

    def __init__(self, path: Path):
        self.path = path

    def on_train_epoch_end(self, trainer, module) -> None:
        module.record_epoch()
        with atomic_path(self.path) as tmp:
            trainer.save_checkpoint(tmp)


def _finished_epochs(path: Path) -> int:
    """The epochs a saved fit has finished (0: none saved); one that is damaged is reported and the
    fit starts over."""
    if not path.exists():
        return 0
    try:
        return len(torch.load(path, map_location="cpu", weights_only=True)["history"])
    except Exception as err:  # a damaged file fails anywhere in torch's reader
        log.warning("training: ignoring damaged saved fit %s (%s); training starts over", path, type(err).__name__)
        return 0
