"""Search behaviour: tactics in real games, the max^n value-vector backup on a hand-made tree, and the
batched engine reproducing a simple reference search visit for visit."""

from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from reference_search import reference_search

from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.games.contract import GameFault
from pipeline.search import BatchedSearch, CachingEvaluator, Forest, RolloutEvaluator, SearchConfig, UniformEvaluator
from pipeline.search.mcts import masked_softmax


def play(game, moves):
    state = game.initial_state()
    for move in moves:
        state, _ = game.step(state, move)
    return state


def search(game, states, evaluator, config, simulations, noise=False, seed=0, compiled=True):
    """A search of each state, compiled where the game and the evaluator allow it (`compiled`)."""
    engine = BatchedSearch(game, evaluator, config, compiled)
    forest = engine.new_forest(simulations + 1, slots=8)
    slots = [forest.new_tree(s, np.random.default_rng(seed + i)) for i, s in enumerate(states)]
    engine.run(forest, slots, simulations, add_noise=noise)
    return forest, slots


def best_move(game, state, evaluator, config, simulations=400):
    forest, (slot,) = search(game, [state], evaluator, config, simulations)
    return int(np.argmax(forest.root_visits(slot)))


SEARCHES = {
    "puct": lambda g: (UniformEvaluator(g), SearchConfig()),
    "uct": lambda g: (RolloutEvaluator(g, seed=1), SearchConfig(selection="ucb1")),
}


@pytest.mark.parametrize("kind", SEARCHES)
def test_finds_win_in_one(kind):
    game = make_game("connect4")
    state = play(game, [0, 6, 1, 6, 2, 5])  # X has 0,1,2 on the bottom row
    assert best_move(game, state, *SEARCHES[kind](game)) == 3


@pytest.mark.parametrize("kind", SEARCHES)
def test_blocks_loss_in_one(kind):
    game = make_game("tictactoe")
    state = play(game, [0, 4, 8, 2])  # O threatens 2-4-6; X must take 6
    assert best_move(game, state, *SEARCHES[kind](game)) == 6


def test_three_player_win_in_one():
    game = make_game("tictacmo")
    state = play(game, [0, 5, 10, 1, 6, 14])  # X holds 0,1 and can complete 0-1-2
    assert best_move(game, state, *SEARCHES["puct"](game)) == 2


class Node(NamedTuple):
    path: tuple[int, ...]


class HandMadeTree:
    """Three players move once each (2 choices); leaves carry hand-picked score vectors.

    Max^n by hand: seat 2 picks its best entry at each of its nodes, seat 1 then picks the branch
    whose resulting vector is best for seat 1, and seat 0 likewise at the root.
    """

    name, num_players, num_actions = "handmade", 3, 2
    # fmt: off
    LEAVES = {
        (0, 0, 0): [0.9, -1.0, -0.9], (0, 0, 1): [-1.0, -1.0, -0.5],  # seat 2 -> (0,0,1): seat1 -1.0
        (0, 1, 0): [-0.2, 0.3, 0.8], (0, 1, 1): [1.0, 0.9, -1.0],  # seat 2 -> (0,1,0): seat1 0.3
        (1, 0, 0): [0.4, -0.6, 0.1], (1, 0, 1): [0.9, 0.5, 0.0],  # seat 2 -> (1,0,0): seat1 -0.6
        (1, 1, 0): [-0.4, 0.2, -0.2], (1, 1, 1): [0.6, 0.1, 0.5],  # seat 2 -> (1,1,1): seat1 0.1
    }
    # fmt: on
    # seat 1: under 0 picks (0,1,0) -> seat0 gets -0.2; under 1 picks (1,1,1) -> seat0 gets 0.6
    MAXN_ROOT_ACTION, MAXN_VALUE = 1, [0.6, 0.1, 0.5]

    def initial_state(self, rng=None):
        return Node(())

    def step(self, state, action, rng=None):
        return Node(state.path + (action,)), None

    def to_play(self, state):
        return len(state.path)

    def is_terminal(self, state):
        return len(state.path) == 3

    def scores(self, state):
        return np.array(self.LEAVES[state.path])

    def legal_mask(self, state):
        return np.ones(2, dtype=bool)


class ExactLeafValues:
    """An evaluator that knows each leaf's exact max^n value, seen from the mover."""

    def __init__(self, game):
        self.game = game

    def evaluate(self, states):
        values = [rotate_to_mover(np.array(self._maxn(s)), self.game.to_play(s)) for s in states]
        return np.zeros((len(states), 2)), np.array(values)

    def _maxn(self, state):
        if self.game.is_terminal(state):
            return self.game.scores(state)
        mover = self.game.to_play(state)
        options = [self._maxn(self.game.step(state, a)[0]) for a in range(2)]
        return max(options, key=lambda v: v[mover])


def test_backup_adds_the_vector_to_every_edge_of_the_path():
    game = HandMadeTree()
    forest, (slot,) = search(game, [game.initial_state()], ExactLeafValues(game), SearchConfig(), simulations=2)
    root = forest.roots[slot]
    # two simulations: each added the leaf's max^n vector (seen in absolute seats) to its path
    assert forest.visits[root].sum() == 2
    child_values = forest.value_sums[root].sum(axis=0)
    assert np.allclose(child_values, forest.root_value(slot) * 2)
    for action in (0, 1):
        child = forest.children[root, action]
        if child >= 0 and forest.visits[root, action] == 1:
            expected = ExactLeafValues(game)._maxn(forest.states[child])
            assert np.allclose(forest.value_sums[root, action], expected)


@pytest.mark.parametrize("evaluator", [UniformEvaluator, ExactLeafValues])
def test_each_player_maximises_its_own_entry(evaluator):
    game = HandMadeTree()
    forest, (slot,) = search(game, [game.initial_state()], evaluator(game), SearchConfig(c_puct=1.0), 3000)
    assert int(np.argmax(forest.root_visits(slot))) == game.MAXN_ROOT_ACTION
    # with most visits on the max^n line, the root's mean value approaches the max^n vector
    assert np.allclose(forest.root_value(slot), game.MAXN_VALUE, atol=0.15)


@pytest.mark.parametrize(
    ("name", "moves", "kind"),
    [
        ("tictacmo", [], "puct"),
        ("tictacmo", [7, 0], "uct"),
        ("connect4", [3, 3, 2], "puct"),
        ("connect4", [], "uct"),
        ("connect3x3", [0, 1], "puct"),
    ],
)
@pytest.mark.parametrize("compiled", [True, False])
def test_batched_engine_matches_the_reference_search(name, moves, kind, compiled):
    """Same formulas, exact values (uniform priors, +-1 rollouts): identical visit counts, with the
    compiled expansion (the Connect games' compiled rules; rollouts need states: the plain search) and
    without."""
    game = make_game(name)
    state = play(game, moves)
    evaluator, config = SEARCHES[kind](game)
    reference = reference_search(game, evaluator, state, 300, config).tolist()
    evaluator, config = SEARCHES[kind](game)
    single, (only,) = search(game, [state], evaluator, config, 300, compiled=compiled)
    assert (single.rules is not None) == (compiled and kind == "puct")
    assert single.root_visits(only).tolist() == reference
    if kind == "puct":  # deterministic leaves: every tree of a batch matches too
        evaluator, config = SEARCHES[kind](game)
        batch, slots = search(game, [state, state, state], evaluator, config, 300, compiled=compiled)
        assert all(batch.root_visits(s).tolist() == reference for s in slots)


@pytest.mark.parametrize("name, moves", [("tictactoe", [4]), ("connect4", [3, 3, 2]), ("tictacmo", [])])
def test_first_play_urgency_matches_the_reference_search_and_changes_what_is_searched(name, moves):
    """Lc0's reduction: an unvisited child is worth the parent's mean less r x sqrt(the visited children's
    prior mass); with r = 0 (the default) the search is the papers' visit for visit (the test above)."""
    game = make_game(name)
    state = play(game, moves)
    config = SearchConfig(fpu_reduction=1.0, c_puct=1.0)
    reference = reference_search(game, UniformEvaluator(game), state, 300, config).tolist()
    forest, (slot,) = search(game, [state], UniformEvaluator(game), config, 300)
    assert forest.root_visits(slot).tolist() == reference
    plain, _ = search(game, [state], UniformEvaluator(game), SearchConfig(c_puct=1.0), 300)
    assert not np.array_equal(plain.visits, forest.visits), "the reduction steers the walks below the root"


def test_batched_trees_search_independently_and_reproducibly():
    game = make_game("tictacmo")
    states = [play(game, []), play(game, [7]), play(game, [0, 5, 10, 1, 6, 14])]

    def visits():
        forest, slots = search(game, states, RolloutEvaluator(game, seed=5), SearchConfig(), 60, noise=True)
        return [forest.root_visits(s).tolist() for s in slots]

    first = visits()
    assert first == visits()
    assert all(sum(v) == 60 for v in first)
    assert first[1][7] == 0  # an occupied cell is never visited


def test_tree_reuse_keeps_the_searched_subtree():
    game = make_game("tictactoe")
    forest, (slot,) = search(game, [game.initial_state()], UniformEvaluator(game), SearchConfig(), 100)
    action = int(np.argmax(forest.root_visits(slot)))
    kept = int(forest.root_visits(slot)[action])
    next_state, _ = game.step(game.initial_state(), action)
    assert forest.advance(slot, action, next_state)
    assert forest.root_visits(slot).sum() == kept - 1  # the child's own first visit expanded it
    other, _ = game.step(next_state, 0 if action != 0 else 1)
    assert not forest.advance(slot, 5 if action != 5 else 3, other)  # a state the child does not hold


def test_forest_grows_and_recycles_slots():
    game = make_game("tictactoe")
    forest = Forest(game, capacity=10, slots=2)
    slots = [forest.new_tree(game.initial_state(), np.random.default_rng(i)) for i in range(5)]
    assert len(set(slots)) == 5
    forest.release(slots[0])
    assert forest.new_tree(game.initial_state(), np.random.default_rng(9)) == slots[0]


class _Hopeful(UniformEvaluator):
    """Uniform priors and a value of 0.25 for the mover: every walked edge's value sums move."""

    def _zeros(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        logits, values = super()._zeros(n)
        values[:, 0] = 0.25
        return logits, values


class _Diverged(UniformEvaluator):
    """A network whose weights diverged: nan for one seat's value."""

    def _zeros(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        logits, values = super()._zeros(n)
        values[:, -1] = np.nan
        return logits, values


@pytest.mark.parametrize("compiled", [True, False])
def test_a_value_that_is_not_finite_is_one_line_before_search_goes_on(compiled):
    game = make_game("connect4")
    engine = BatchedSearch(game, _Diverged(game), SearchConfig(), compiled=compiled)
    forest = engine.new_forest(64, 1)
    slot = forest.new_tree(game.initial_state(), np.random.default_rng(0))
    with pytest.raises(GameFault) as fault:
        engine.run(forest, [slot], 8)
    line = str(fault.value)
    assert "connect4" in line and "value of a position is not finite" in line and "\n" not in line


@pytest.mark.parametrize("name", ["connect4", "kingdomino(players=3)"])
def test_a_slot_given_a_new_tree_holds_no_statistics_of_the_old_one(name):
    """`reset` clears only each used node's legal edges (the only ones a walk writes): a searched slot given
    a new tree holds zeros where a fresh forest does, chance nodes and finished games included."""
    game = make_game(name)
    engine = BatchedSearch(game, _Hopeful(game), SearchConfig())
    forest = engine.new_forest(600, 1)
    slot = forest.new_tree(game.initial_state(np.random.default_rng(1)), np.random.default_rng(1))
    engine.run(forest, [slot], 250)
    assert forest.visits.any() and forest.value_sums.any()
    forest.reset(slot, game.initial_state(np.random.default_rng(2)))
    assert not forest.visits.any() and not forest.value_sums.any()
    assert forest.used[slot] == 1 and (forest.status[1:] == 0).all()


@pytest.mark.parametrize("compiled", [True, False])
def test_trees_searched_before_the_forest_grows_search_on_as_if_it_had_not(compiled):
    """Growing copies only the nodes each tree uses: searching on after a growth gives every node the
    statistics of a forest that had room from the start."""
    game = make_game("connect4")
    states = [play(game, moves) for moves in ([], [3], [3, 3])]
    results = []
    for slots in (1, 8):
        engine = BatchedSearch(game, UniformEvaluator(game), SearchConfig(), compiled)
        forest = engine.new_forest(200, slots)
        trees = []
        for index, state in enumerate(states):  # a tree searched, then the next one's slot makes room
            trees.append(forest.new_tree(state, np.random.default_rng(index)))
            engine.run(forest, trees, 20)
        engine.run(forest, trees, 40)
        nodes = [range(t * forest.capacity, t * forest.capacity + int(forest.used[t])) for t in trees]
        results.append([(forest.visits[n].tolist(), forest.value_sums[n].tolist()) for n in nodes])
        assert len(forest.roots) == (4 if slots == 1 else 8)
    assert results[0] == results[1]


def test_cache_answers_transpositions_without_the_evaluator():
    game = make_game("tictactoe")
    calls = []

    class Counting(UniformEvaluator):
        def evaluate(self, states):
            calls.append(len(states))
            return super().evaluate(states)

    cached = CachingEvaluator(Counting(game))
    a = play(game, [0, 4, 8])
    b = play(game, [8, 4, 0])  # the same position by another move order
    logits, values = cached.evaluate([a, b, a])
    assert calls == [1] and cached.hits == 2 and logits.shape == (3, 9)


@pytest.mark.parametrize("size", [200_000, 3])
def test_cache_gives_each_position_its_own_answer_in_the_order_asked(size):
    """Hits, repeated misses and fresh misses mixed in one batch come back as the evaluator's own rows, in a
    cache with room and in one that starts over in the middle of the batch's answer."""
    game = make_game("tictactoe")

    class ByPosition:  # a distinct answer per position: the encoded planes themselves
        def evaluate(self, states):
            planes = game.encode_batch(states).reshape(len(states), -1)
            return planes[:, :9], planes[:, 9:11]

    positions = [play(game, moves) for moves in ([0], [4], [0, 4], [4, 0], [8])]
    cached = CachingEvaluator(ByPosition(), size)
    cached.evaluate(positions[:2])
    asked = [positions[i] for i in (2, 0, 2, 3, 1, 4, 3)]
    logits, values = cached.evaluate(asked)
    expected_logits, expected_values = ByPosition().evaluate(asked)
    assert np.array_equal(logits, expected_logits) and np.array_equal(values, expected_values)
    assert cached.hits == 2 + 2  # positions 0 and 1 from the first call, repeats of 2 and 3 in the batch
    again = [positions[i] for i in (4, 3, 2)]  # kept, whatever the cache's room
    assert np.array_equal(cached.evaluate(again)[0], ByPosition().evaluate(again)[0]) and cached.hits == 4 + 3


class Counting(UniformEvaluator):
    """Uniform priors, zero values, and the size of every batch it was asked to judge."""

    def __init__(self, game):
        super().__init__(game)
        self.batches = []

    def _zeros(self, n):
        self.batches.append(n)
        return super()._zeros(n)


def test_parallel_leaves_batch_one_tree_and_take_every_virtual_loss_back():
    """Eight walkers a step: one tree's leaves reach the evaluator eight at a time, every simulation
    is counted once, and no virtual loss is left behind (zero values back up to exactly zero)."""
    game = make_game("connect4")
    evaluator = Counting(game)
    forest, (slot,) = search(game, [game.initial_state()], evaluator, SearchConfig(parallel_leaves=8), 60)
    assert forest.root_visits(slot).sum() == 60
    assert max(evaluator.batches) == 8 and len(evaluator.batches) <= 1 + 60 // 8 + 1
    used = int(forest.used[slot])
    assert not forest.value_sums[slot * forest.capacity : slot * forest.capacity + used].any()


@pytest.mark.parametrize("kind", SEARCHES)
def test_parallel_leaves_still_find_the_win_and_the_block(kind):
    """Walkers that collide on a leaf or a finished game (few moves left) share one judgement."""
    evaluator, config = SEARCHES[kind](make_game("connect4"))
    game = make_game("connect4")
    state = play(game, [0, 6, 1, 6, 2, 5])
    assert best_move(game, state, evaluator, config.model_copy(update={"parallel_leaves": 8})) == 3
    game = make_game("tictactoe")
    evaluator, config = SEARCHES[kind](game)
    state = play(game, [0, 4, 8, 2])
    assert best_move(game, state, evaluator, config.model_copy(update={"parallel_leaves": 16})) == 6


def test_parallel_leaves_through_chance_nodes():
    """Kingdomino's draws: walkers that meet at a chance node each draw an outcome of their own."""
    game = make_game("kingdomino(players=2)")
    rng = np.random.default_rng(3)
    state = game.initial_state(rng)
    for _ in range(6):
        state, _ = game.step(state, int(game.greedy_action(state)), rng)
    config = SearchConfig(parallel_leaves=6, max_chance_children=2)
    forest, slots = search(game, [state, state], Counting(game), config, 40)
    assert all(forest.root_visits(s).sum() == 40 for s in slots)
    assert np.abs(forest.root_value(slots[0])).max() <= 1


def test_gumbel_root_refuses_parallel_leaves_in_one_line_naming_the_field():
    with pytest.raises(ValueError, match="parallel_leaves"):
        SearchConfig(root="gumbel", parallel_leaves=4)
    params = {"game": "tictactoe", "search": {"root": "gumbel", "parallel_leaves": 4}}
    with pytest.raises(ConfigError) as error:
        parse_params({**params, "generations": [{"gen": 1, "prev": 0}]})
    assert "search: parallel_leaves" in str(error.value) and "\n" not in str(error.value)


@pytest.fixture
def nim_on_path(tmp_path, monkeypatch):
    """The guide's Nim (docs/adding-a-game.md), a plugin in a folder of the user's on Python's path."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "adding-a-game.md").read_text()
    nim = next(block for block in guide.split("```python")[1:] if "class Nim:" in block).split("```")[0]
    (tmp_path / "nim.py").write_text(nim)
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.parametrize("kind", SEARCHES)
@pytest.mark.parametrize("spec", ["tictactoe", "pig(players=2,goal=20)", "pig(players=3,goal=12)", "nim:Nim(rows=3)"])
def test_the_other_games_and_a_plugin_match_the_reference_search(nim_on_path, spec, kind):
    """The games the test above leaves out, Pig's dice and a user's game checked at every call
    (`games/guard.py`) included: the same draws from the same seed, identical visit counts (the guide's
    Nim and Pig have no compiled rules: the plain search)."""
    game = make_game(spec)
    state = game.initial_state(np.random.default_rng(3))
    simulations = 300
    evaluator, config = SEARCHES[kind](game)
    reference = reference_search(game, evaluator, state, simulations, config, np.random.default_rng(7))
    evaluator, config = SEARCHES[kind](game)
    engine = BatchedSearch(game, evaluator, config)  # compiled where it can be: Tic-Tac-Toe under PUCT
    forest = engine.new_forest(2 * simulations + 2, 1)
    slot = forest.new_tree(state, np.random.default_rng(7))
    engine.run(forest, [slot], simulations)
    assert (forest.rules is not None) == (spec == "tictactoe" and kind == "puct")
    assert forest.root_visits(slot).tolist() == reference.tolist()


def test_priors_are_the_softmax_of_the_legal_moves_logits_and_zero_elsewhere():
    rng = np.random.default_rng(0)
    logits = (rng.normal(size=(5, 40)) * 20).astype(np.float32)
    legal = rng.random((5, 40)) < 0.2
    legal[:, 7] = True  # every row has a legal move
    priors = masked_softmax(logits, legal)
    shifted = np.where(legal, logits.astype(np.float64), -np.inf)
    exp = np.exp(shifted - shifted.max(axis=1, keepdims=True))
    assert priors.dtype == np.float32
    np.testing.assert_allclose(priors, exp / exp.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    assert (priors[~legal] == 0).all()
    logits[0, 7] = np.nan  # a logit that is not a number spoils its row, as numpy's softmax would
    assert np.isnan(masked_softmax(logits, legal)[0, legal[0]]).all()
