"""Torch threads follow the free cores: a process drops to the cores that busy neighbours leave it,
and a fixed `threads` setting is never second-guessed."""

import multiprocessing
import os
import time

import pytest
import torch

from pipeline.jobs.throughput import _spin, with_load_figures
from pipeline.plumbing import threads


@pytest.fixture(autouse=True)
def restore_threads():
    before = torch.get_num_threads()
    yield
    threads.use_threads(before)


def test_fixed_threads_are_kept():
    threads.use_threads(3)
    threads.follow_free_cores()
    assert torch.get_num_threads() == 3


def test_busy_neighbours_leave_one_thread():
    cores = os.cpu_count() or 1
    follower = threads.CoreFollower(most=2)
    assert torch.get_num_threads() == 2
    context = multiprocessing.get_context("spawn")
    neighbours = [context.Process(target=_spin, daemon=True) for _ in range(cores)]
    for process in neighbours:
        process.start()
    try:
        time.sleep(3)  # the neighbours' start-up, then a full sampling interval of their spinning
        follower.others_busy()
        time.sleep(threads.CHECK_EVERY_S + 0.5)
        follower.check()
    finally:
        for process in neighbours:
            process.kill()
            process.join()
    assert torch.get_num_threads() == 1


def test_load_figures_sit_beside_the_quiet_ones():
    quiet = {"threads": 2, "train": 100.0, "tictacmo": {"sims": 10.0}}
    loaded = {"threads": 2, "train": 80.0, "tictacmo": {"sims": 7.0}}
    assert with_load_figures(quiet, loaded) == {
        "threads": 2,
        "train": 100.0,
        "train_under_load": 80.0,
        "tictacmo": {"sims": 10.0, "sims_under_load": 7.0},
    }
