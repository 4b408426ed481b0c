"""Search behaviour: tactics in real games, and the max^n value-vector backup on a hand-made tree."""

from typing import NamedTuple

import numpy as np
import pytest

from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.search import BatchedSearch, RolloutEvaluator, SearchConfig, Tree, UniformEvaluator


def play(game, moves):
    state = game.initial_state()
    for move in moves:
        state, _ = game.step(state, move)
    return state


def best_move(game, state, evaluator, config, simulations=400):
    tree = Tree(game, state, np.random.default_rng(0))
    BatchedSearch(game, evaluator, config).run([tree], simulations)
    return int(np.argmax(tree.root_visits()))


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
    LEAVES = {
        (0, 0, 0): [0.9, -1.0, -0.9],
        (0, 0, 1): [-1.0, -1.0, -0.5],  # seat 2 -> (0,0,1): seat1 -1.0
        (0, 1, 0): [-0.2, 0.3, 0.8],
        (0, 1, 1): [1.0, 0.9, -1.0],  # seat 2 -> (0,1,0): seat1 0.3
        (1, 0, 0): [0.4, -0.6, 0.1],
        (1, 0, 1): [0.9, 0.5, 0.0],  # seat 2 -> (1,0,0): seat1 -0.6
        (1, 1, 0): [-0.4, 0.2, -0.2],
        (1, 1, 1): [0.6, 0.1, 0.5],  # seat 2 -> (1,1,1): seat1 0.1
    }
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
    tree = Tree(game, game.initial_state(), np.random.default_rng(0))
    a, _ = tree.child(tree.root, 1)
    b, _ = tree.child(a, 1)
    value = np.array([0.6, 0.1, 0.5])
    tree.backup([(tree.root, 1), (a, 1), (b, 1)], value)
    tree.backup([(tree.root, 1), (a, 0)], -value)
    assert tree.visits[tree.root].tolist() == [0, 2]
    assert np.allclose(tree.value_sums[tree.root, 1], 0.0)
    assert np.allclose(tree.value_sums[a, 1], value) and np.allclose(tree.value_sums[a, 0], -value)
    assert tree.visits[b].tolist() == [0, 1]


@pytest.mark.parametrize("evaluator", [UniformEvaluator, ExactLeafValues])
def test_each_player_maximises_its_own_entry(evaluator):
    game = HandMadeTree()
    tree = Tree(game, game.initial_state(), np.random.default_rng(0))
    BatchedSearch(game, evaluator(game), SearchConfig(c_puct=1.0)).run([tree], 3000)
    assert int(np.argmax(tree.root_visits())) == game.MAXN_ROOT_ACTION
    # with most visits on the max^n line, the root's mean value approaches the max^n vector
    assert np.allclose(tree.root_value(), game.MAXN_VALUE, atol=0.15)


def test_batched_trees_search_independently_and_reproducibly():
    game = make_game("tictacmo")
    states = [play(game, []), play(game, [7]), play(game, [0, 5, 10, 1, 6, 14])]

    def visits():
        trees = [Tree(game, s, np.random.default_rng(i)) for i, s in enumerate(states)]
        BatchedSearch(game, RolloutEvaluator(game, seed=5), SearchConfig()).run(trees, 60, add_noise=True)
        return [t.root_visits().tolist() for t in trees]

    first = visits()
    assert first == visits()
    assert all(sum(v) == 60 for v in first)
    assert first[1][7] == 0  # an occupied cell is never visited


def test_tree_reuse_keeps_the_searched_subtree():
    game = make_game("tictactoe")
    tree = Tree(game, game.initial_state(), np.random.default_rng(0))
    BatchedSearch(game, UniformEvaluator(game), SearchConfig()).run([tree], 100)
    action = int(np.argmax(tree.root_visits()))
    kept = int(tree.root_visits()[action])
    next_state, _ = game.step(game.initial_state(), action)
    assert tree.advance(action, next_state)
    assert tree.root_visits().sum() == kept - 1  # the child's own first visit expanded it
    other, _ = game.step(next_state, 0 if action != 0 else 1)
    assert not tree.advance(5 if action != 5 else 3, other)  # a state the child does not hold
