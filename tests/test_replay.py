"""The replay buffer: its window of generations (fixed or growing), the merging of repeated positions
(AlphaZero.jl's position averaging) and the weighted losses that train on it."""

import numpy as np
import pytest
import torch
from test_nets import fixed_batch, small_net

from pipeline.config import TrainParams
from pipeline.games import make_game
from pipeline.jobs.replay import Augmented, empty_samples, merge_positions, window_generations, windowed
from pipeline.jobs.train import EpochBatches, train_network
from pipeline.nets.module import alphazero_losses


def repeated_positions(game):
    """Position A three times (values +1, +1, -1), B once, A's copies from generations 1, 2 and 3."""
    distinct = fixed_batch(game, n=2)
    pick = np.array([0, 1, 0, 0])
    samples = {name: array[pick].copy() for name, array in distinct.items()}
    samples["values"] = np.array([[1, -1], [0.5, -0.5], [1, -1], [-1, 1]], dtype=np.float32)
    samples["policies"][[0, 2, 3]] = np.eye(game.num_actions, dtype=np.float32)[[0, 0, 3]]
    samples["generations"] = np.array([1, 2, 3, 2], dtype=np.int32)
    return samples


def test_repeated_positions_become_one_sample_with_averaged_targets_and_a_log_weight():
    game = make_game("connect4")
    merged = merge_positions(repeated_positions(game))

    assert len(merged["states"]) == 2
    a = next(i for i in range(2) if merged["values"][i, 0] != 0.5)
    b = 1 - a
    np.testing.assert_allclose(merged["values"][a], [1 / 3, -1 / 3], atol=1e-6)
    np.testing.assert_allclose(merged["policies"][a, [0, 3]], [2 / 3, 1 / 3], atol=1e-6)
    np.testing.assert_allclose(merged["values"][b], [0.5, -0.5])
    assert merged["generations"][a] == 3  # the newest copy: the window keeps it as long as any copy
    raw = np.array([1 + np.log2(3), 1.0])[[0, 1] if a == 0 else [1, 0]]
    np.testing.assert_allclose(merged["weights"], raw / raw.mean(), rtol=1e-6)


@pytest.mark.parametrize("spec", ["connect4", "kingdomino(players=2)"])
def test_augmented_batches_are_each_sample_under_its_symmetry_with_its_weight(spec):
    game = make_game(spec)
    merged = merge_positions(repeated_positions(game)) if spec == "connect4" else fixed_batch(game, n=3)
    merged.setdefault("weights", np.arange(1, 4, dtype=np.float32))
    symmetries = game.symmetries()
    augmented = Augmented(merged, symmetries)
    count = len(merged["states"])
    assert len(augmented) == count * len(symmetries)
    indices = np.random.default_rng(0).permutation(len(augmented))[:7]
    batch = augmented.batch(indices)
    for row, i in enumerate(indices):
        sym, sample = symmetries[i // count], i % count
        np.testing.assert_array_equal(batch["states"][row], sym.board(merged["states"][sample]))
        np.testing.assert_array_equal(batch["policies"][row], merged["policies"][sample][sym.action_perm])
        assert batch["weights"][row] == merged["weights"][sample]


def test_a_weight_counts_its_sample_that_many_times_in_the_losses():
    game = make_game("tictacmo")
    batch = fixed_batch(game, n=2)
    tensors = [torch.from_numpy(batch[k].astype(np.float32)) for k in ("states", "policies", "values")]
    model = small_net(game).eval()
    with torch.no_grad():
        weighted = alphazero_losses(model, *tensors, torch.tensor([2.0, 0.0]))
        first_only = alphazero_losses(model, *(t[:1] for t in tensors))
    for got, expected in zip(weighted, first_only, strict=True):
        assert got.item() == pytest.approx(expected.item(), rel=1e-5)


@pytest.mark.parametrize("merge", [False, True])
def test_training_merges_positions_only_when_asked(merge):
    game = make_game("connect4")
    samples = {name: np.concatenate([array] * 5) for name, array in repeated_positions(game).items()}
    params = TrainParams(epochs=1, batch_size=8, augment=True, merge_positions=merge)
    result = train_network(game, small_net(game), samples, params, seed=0, progress=False)
    positions = 2 if merge else 20
    assert result.samples == positions * len(game.symmetries())


def test_random_augmentation_takes_each_sample_once_an_epoch_under_a_symmetry_drawn_for_it():
    """`augment: random` (AlphaGo Zero's): an epoch is the samples, not the samples times the symmetries,
    each under a view drawn from (seed, epoch), so a resumed fit draws the same ones."""
    sampler = EpochBatches(size=50, batch_size=8, seed=3, views=8)
    epochs = []
    for epoch in (0, 1, 0):
        sampler.epoch = epoch
        epochs.append(np.concatenate([np.asarray(batch) for batch in sampler]))
    for indices in epochs:
        view, sample = np.divmod(indices, 50)
        assert sorted(sample) == list(range(50)) and view.min() >= 0 and view.max() < 8
    assert len({*np.divmod(epochs[0], 50)[0]}) > 1  # the views vary between samples
    assert np.array_equal(epochs[0], epochs[2]) and not np.array_equal(epochs[0], epochs[1])

    game = make_game("connect4")
    samples = {name: np.concatenate([array] * 5) for name, array in repeated_positions(game).items()}
    params = TrainParams(epochs=1, batch_size=8, augment="random")
    assert train_network(game, small_net(game), samples, params, seed=0, progress=False).samples == 20


def one_generation_of(game, generation: int) -> dict[str, np.ndarray]:
    samples = fixed_batch(game, n=3)
    samples["generations"] = np.full(3, generation, dtype=np.int32)
    return samples


@pytest.mark.parametrize(
    "growth, expected",
    [(0, [3, 3, 3, 3, 3, 3, 3, 3]), (1, [1, 2, 3, 3, 3, 3, 3, 3]), (2, [1, 1, 2, 2, 3, 3, 3, 3])],
)
def test_the_window_is_fixed_or_grows_by_one_generation_every_growth_generations(growth, expected):
    params = TrainParams(replay_window=3, replay_window_growth=growth)
    assert [window_generations(params, g) for g in range(1, 9)] == expected


def test_a_growing_window_keeps_exactly_the_generations_it_has_grown_to():
    """The stage saves each windowed buffer and windows it again at the next generation: a window that
    grows by one can only need generations the last buffer kept."""
    game = make_game("tictacmo")
    params = TrainParams(replay_window=3, replay_window_growth=2)
    kept = empty_samples(game)
    for generation in range(1, 9):
        kept = windowed(kept, one_generation_of(game, generation), generation, params)
        newest = range(generation - window_generations(params, generation) + 1, generation + 1)
        assert sorted(set(kept["generations"].tolist())) == list(newest)
        assert len(kept["states"]) == 3 * len(newest)


def test_a_sample_file_of_pickled_objects_is_refused_without_numpys_advice_to_unpickle(tmp_path):
    from pipeline.jobs.replay import FIELDS, DataError, load_samples

    path = tmp_path / "gen_1.npz"
    np.savez(path, **{name: np.array([object()], dtype=object) for name in FIELDS})
    with pytest.raises(DataError, match="holds pickled objects, which are never loaded") as refused:
        load_samples(path)
    assert "allow_pickle" not in str(refused.value)
