"""The compiled Kingdomino (`games/kingdomino/compiled.py`) against the pure-Python reference
(`games/kingdomino/rules.py`): the same legal moves, greedy choices, planes, playouts and standings in every variant,
over games that mix random and greedy moves (thousands more: `git show 3f02b5e:benchmarks/kingdomino_compiled_check.py >
kingdomino_compiled_check.py && python kingdomino_compiled_check.py`, docs/results/kingdomino-compiled.md)."""

import random
from dataclasses import replace

import numpy as np
import pytest
import torch

from alphazero_games.kingdomino import rows
from alphazero_games.kingdomino.compiled import CompiledKingdomino
from alphazero_games.kingdomino.rules import KingdominoGame
from pipeline.config import ValueParams
from pipeline.games import make_game, pcg64
from pipeline.nets.network_evaluator import NetworkEvaluator
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.search.playouts import greedy_outcomes, greedy_playout

# (players, size, middle, harmony, fit): every player count, the Mighty Duel, each bonus, the fit planes
VARIANTS = [(4, 5, 0, 0, 1), (4, 5, 1, 0, 0), (3, 5, 1, 1, 1), (3, 5, 0, 0, 0), (2, 5, 0, 1, 1), (2, 7, 1, 1, 1)]


def positions(game, games: int, seed: int):
    """Every position of `games` games whose moves are greedy or random, half and half."""
    rng, choices = np.random.default_rng(seed), random.Random(seed)
    for _ in range(games):
        state = game.initial_state(rng)
        while not state.done:
            yield state
            greedy = choices.random() < 0.5
            state, _ = game.step(
                state, game.greedy_action(state) if greedy else choices.choice(game.legal_actions(state)), rng
            )
        yield state


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_compiled_rules_agree_with_the_reference_on_every_position(variant):
    reference, compiled = KingdominoGame(*variant), CompiledKingdomino(*variant)
    finished = 0
    for state in positions(reference, 6, seed=sum(variant)):
        if state.done:
            assert compiled.scores(state).tolist() == reference.scores(state).tolist()
            assert compiled.margins(state).tolist() == reference.margins(state).tolist()
            finished += 1
            continue
        assert compiled.legal_actions(state) == reference.legal_actions(state)
        assert compiled.greedy_action(state) == reference.greedy_action(state)
        assert np.array_equal(compiled.encode_batch([state])[0], reference.encode(state))
        illegal = next(a for a in range(reference.num_actions) if not reference.legal_mask(state)[a])
        assert not compiled._is_legal(state, illegal)
    assert finished == 6


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_compiled_playout_ends_where_the_reference_greedy_playout_ends(variant):
    """Without a generator both draw the deck's rows in its order, so the ends must be the same."""
    reference, compiled = KingdominoGame(*variant), CompiledKingdomino(*variant)
    states = list(positions(reference, 2, seed=7))[::5]
    scores, margins = compiled.greedy_outcomes(states, [None] * len(states))
    for state, score, margin in zip(states, scores, margins):
        end = greedy_playout(reference, state, None)
        assert score.tolist() == reference.scores(end).tolist()
        assert margin.tolist() == reference.margins(end).tolist()


@pytest.mark.parametrize("entries", [1, 4, 1 << 14])
def test_planes_from_rows_are_the_references_whatever_the_kingdom_memo_keeps(entries):
    """Search's encoding reads each kingdom's analysis and gains from a memo (`memo.py`): with one entry
    every kingdom evicts the last, even another seat's of the same position, and a second pass reads hits."""
    reference, compiled = KingdominoGame(3, 5, 1, 1, 1), CompiledKingdomino(3, 5, 1, 1, 1)
    rules = rows.compiled_rules(compiled, entries)
    states = [state for state in positions(reference, 2, seed=5) if not state.done]
    table = np.stack([rules.to_row(state) for state in states])
    planes = np.zeros((len(states), *compiled.observation_shape), dtype=np.float32)
    for _ in range(2):
        rules.encode(rules.shape, table, np.arange(len(states))[::-1].copy(), len(states), planes)
        for state, got in zip(states[::-1], planes):
            assert np.array_equal(got, reference.encode(state))


def test_a_network_reading_constant_planes_as_a_vector_judges_their_first_cells_alike():
    """`encode_vectors` writes the constant planes at their first cell only: the network that reads them
    there (`senet.py`'s constant stem) gives the same answer as from the full planes."""
    game = CompiledKingdomino(4, 5, 0, 0, 1)
    rules = rows.compiled_rules(game)
    states = [state for state in positions(game, 1, seed=11) if not state.done][::4]
    table, nodes = np.stack([rules.to_row(state) for state in states]), np.arange(len(states))
    full, vectors = (np.zeros((len(states), *game.observation_shape), dtype=np.float32) for _ in range(2))
    rules.encode(rules.shape, table, nodes, len(states), full)
    rules.encode_vectors(rules.shape, table, nodes, len(states), vectors)
    board = game.observation_shape[0] - game.constant_planes()
    assert np.array_equal(vectors[:, :board], full[:, :board])
    assert np.array_equal(vectors[:, board:, 0, 0], full[:, board:, 0, 0])
    assert not vectors[:, board:, 1:].any() and full[:, board:, 1:].any()
    torch.manual_seed(3)
    network = SENet(NetworkShape.for_game(game, 1, 8, 2)).eval()
    assert NetworkEvaluator(game, network).reads_constant_vector()
    plain = SENet(replace(network.shape, constant_planes=0)).eval()  # a stem reading every plane's every cell
    assert not NetworkEvaluator(game, plain).reads_constant_vector()
    with torch.no_grad():
        for got, want in zip(network(torch.from_numpy(vectors)), network(torch.from_numpy(full))):
            assert torch.equal(got, want)


def test_a_batch_of_planes_is_each_state_encoded_alone():
    game = make_game("kingdomino(players=4,fit=1)")
    states = list(positions(game, 1, seed=3))[:-1]
    together = game.encode_batch(states)
    assert all(np.array_equal(together[i], game.encode_batch([s])[0]) for i, s in enumerate(states))


def test_playouts_follow_their_generators_seed():
    """The same seed, the same draws and ends; another seed, other draws (and some other end)."""
    game = make_game("kingdomino(players=4)")
    states = list(positions(game, 1, seed=5))[:30]

    def ends(seed):
        return greedy_outcomes(game, states, [np.random.default_rng(seed + i) for i in range(len(states))])[1]

    assert np.array_equal(ends(0), ends(0))
    assert not np.array_equal(ends(0), ends(100))


def test_playouts_from_lent_streams_are_the_generators_playouts():
    """What a search whose generators are lent to its kernels plays out (`playouts_from_streams`): the same
    ends as from the generators, which then go on alike; two rows may share a tree's stream."""
    game = make_game("kingdomino(players=4,fit=1)")
    rules = game.compiled_rules()
    states = list(positions(game, 1, seed=9))[:-1:6]
    table = [rules.to_row(state) for state in states]
    trees = [i % 3 for i in range(len(states))]
    plain, lent = ([np.random.default_rng(40 + t) for t in range(3)] for _ in range(2))
    expected = rules.playouts(table, [plain[t] for t in trees])
    streams = pcg64.streams(lent)
    found = rules.playouts_from_streams(streams, table, trees)
    pcg64.store(streams, lent)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected))
    assert [g.integers(2**40) for g in lent] == [g.integers(2**40) for g in plain]


def test_the_registry_builds_the_compiled_game():
    assert isinstance(make_game("kingdomino(players=3,middle=1)"), CompiledKingdomino)


def test_a_search_without_playouts_plays_alike_on_both():
    """Same network, same seeds: the compiled game's search visits every move as the reference's does,
    move after move through a draw (the search's own chance nodes still draw through `step`)."""
    import torch

    from pipeline.nets.network_evaluator import NetworkEvaluator
    from pipeline.nets.senet import NetworkShape, SENet
    from pipeline.search import BatchedSearch, Forest, SearchConfig

    def visits(game) -> list[list[int]]:
        torch.manual_seed(0)
        evaluator = NetworkEvaluator(game, SENet(NetworkShape.for_game(game, 1, 8, 2)))
        config = SearchConfig(value=ValueParams(scheme="pairwise_rank"))
        search, rng, state, seen = BatchedSearch(game, evaluator, config), np.random.default_rng(0), None, []
        state = game.initial_state(rng)
        for ply in range(12):  # the first round's picks, the draw, the second round's first moves
            forest = Forest(game, 8 * 30 + 16, 1, config.end_value(game))
            slot = forest.new_tree(state, np.random.default_rng(ply))
            search.run(forest, [slot], 30, add_noise=True)
            seen.append(forest.root_visits(slot).tolist())
            state, _ = game.step(state, int(np.argmax(seen[-1])), rng)
        return seen

    assert visits(CompiledKingdomino(4, fit=1)) == visits(KingdominoGame(4, fit=1))
