"""Chance nodes in search (the Kingdomino notes): values converge to the chance-weighted mean, each chance node
keeps at most `max_chance_children` outcomes and evicts the least visited, tree reuse follows the
outcome the game actually drew."""

from typing import NamedTuple

import numpy as np
import pytest

from pipeline.games import make_game
from pipeline.games.base import Symmetry
from pipeline.search import BatchedSearch, Forest, SearchConfig, UniformEvaluator
from pipeline.search.tree_kernels import CHANCE

SURE, GAMBLE = 0, 1  # first decision
KEEP, REROLL = 0, 1  # after the roll
PROBABILITIES = np.array([0.1, 0.2, 0.3, 0.4])
PAYOUTS = np.array([-1.0, -0.5, 0.5, 1.0])
SURE_PAYOUT = 0.1
REROLL_MEAN = float(PROBABILITIES @ PAYOUTS)  # 0.35
# Keep faces paying more than a reroll is worth: 0.1 * 0.35 + 0.2 * 0.35 + 0.3 * 0.5 + 0.4 * 1.0
GAMBLE_VALUE = float(PROBABILITIES @ np.maximum(PAYOUTS, REROLL_MEAN))  # 0.655


class LotteryState(NamedTuple):
    stage: int  # 0: choose sure or gamble; 1: keep or reroll the face; 2: over
    face: int
    payout: float


class Lottery:
    """Seat 0 takes a sure 0.1 or rolls a weighted four-sided die, then keeps its payout or rerolls
    once (the reroll is final). Seat 1 never moves and gets the negated payout."""

    name, num_players, num_actions, observation_shape = "lottery", 2, 2, (1, 1, 1)

    def initial_state(self, rng=None):
        return LotteryState(0, -1, 0.0)

    def legal_actions(self, state):
        return [] if state.stage == 2 else [0, 1]

    def legal_mask(self, state):
        return np.array([state.stage < 2] * 2)

    def _roll(self, rng):
        return int(rng.choice(4, p=PROBABILITIES))

    def step(self, state, action, rng=None):
        if state.stage == 0 and action == SURE:
            return LotteryState(2, -1, SURE_PAYOUT), None
        if state.stage == 1 and action == KEEP:
            return LotteryState(2, state.face, state.payout), None
        face = self._roll(rng)
        return LotteryState(state.stage + 1, face, float(PAYOUTS[face])), face

    def to_play(self, state):
        return 0

    def ply(self, state):
        return state.stage

    def is_terminal(self, state):
        return state.stage == 2

    def scores(self, state):
        return np.array([state.payout, -state.payout], dtype=np.float32)

    def symmetries(self):
        return [Symmetry(lambda x: x, np.arange(2))]


def search(state, simulations, max_chance_children=8, seed=0, c_puct=1.0):
    game = Lottery()
    forest = Forest(game, capacity=2 * simulations + 2, max_chance_children=max_chance_children)
    slot = forest.new_tree(state, np.random.default_rng(seed))
    BatchedSearch(game, UniformEvaluator(game), SearchConfig(c_puct=c_puct)).run(forest, [slot], simulations)
    return forest, forest.roots[slot]


def edge_mean(forest, node, action):
    return forest.value_sums[node, action, 0] / forest.visits[node, action]


def test_a_chance_edge_converges_to_the_expectation():
    """Rerolling from a bad face leads to pure chance: its mean is a sample mean of the payouts."""
    forest, root = search(LotteryState(1, 0, -1.0), 4000)
    n = forest.visits[root, REROLL]
    spread = float(np.sqrt(PROBABILITIES @ (PAYOUTS - REROLL_MEAN) ** 2))
    assert n > 3000
    assert abs(edge_mean(forest, root, REROLL) - REROLL_MEAN) < 4 * spread / np.sqrt(n)  # four standard errors


def test_search_values_a_gamble_by_expectimax():
    """Decisions after the roll: the gamble's value approaches max-after-chance (0.655), far above the
    sure 0.1 and the plain average payout (0.35); exploration of the worse replies costs a little."""
    forest, root = search(LotteryState(0, -1, 0.0), 6000)
    assert forest.visits[root, GAMBLE] > forest.visits[root, SURE]
    assert abs(edge_mean(forest, root, GAMBLE) - GAMBLE_VALUE) < 0.05
    chance = forest.children[root, GAMBLE]
    assert forest.status[chance] == CHANCE
    counts = {face: visits for face, (_, visits) in forest.outcomes[chance].items()}
    assert sum(counts.values()) == forest.visits[root, GAMBLE]
    shares = np.array([counts[face] for face in range(4)]) / sum(counts.values())
    assert np.abs(shares - PROBABILITIES).max() < 0.03  # outcomes are drawn by the game's own dice


def test_chance_children_are_bounded():
    forest, root = search(LotteryState(0, -1, 0.0), 500, max_chance_children=2)
    chance_nodes = [n for n in range(int(forest.used[0])) if forest.status[n] == CHANCE]
    assert chance_nodes
    assert all(len(forest.outcomes[n]) <= 2 for n in chance_nodes)


def test_a_new_outcome_evicts_the_least_visited():
    game = Lottery()
    forest = Forest(game, capacity=16, max_chance_children=2)
    slot = forest.new_tree(game.initial_state(), np.random.default_rng(0))
    chance = forest.add_chance_node(slot)
    states = {face: LotteryState(1, face, float(PAYOUTS[face])) for face in range(4)}
    for face in (0, 0, 0, 1, 0):
        forest.outcome(slot, chance, face, states[face])
    assert {face: visits for face, (_, visits) in forest.outcomes[chance].items()} == {0: 4, 1: 1}
    forest.outcome(slot, chance, 2, states[2])
    assert sorted(forest.outcomes[chance]) == [0, 2]


def test_fixed_outcomes_keep_the_first_draws_and_send_later_passes_to_the_least_visited():
    game = Lottery()
    forest = Forest(game, capacity=16, max_chance_children=2, chance_outcomes="fixed")
    slot = forest.new_tree(game.initial_state(), np.random.default_rng(0))
    chance = forest.add_chance_node(slot)
    states = {face: LotteryState(1, face, float(PAYOUTS[face])) for face in range(4)}
    reached = [forest.outcome(slot, chance, face, states[face]) for face in (3, 3, 1, 2, 0, 2)]
    kept = {face: (node, visits) for face, (node, visits) in forest.outcomes[chance].items()}
    assert {face: visits for face, (_, visits) in kept.items()} == {3: 3, 1: 3}
    assert reached == [kept[3][0], kept[3][0], kept[1][0], kept[1][0], kept[3][0], kept[1][0]]  # ties: first kept


def test_tree_reuse_follows_the_drawn_outcome():
    forest, root = search(LotteryState(0, -1, 0.0), 300)
    slot = 0
    reached = LotteryState(1, 3, 1.0)
    child = forest.outcomes[forest.children[root, GAMBLE]][3][0]
    assert forest.advance(slot, GAMBLE, reached)
    assert forest.roots[slot] == child and forest.visits[child].sum() > 0
    assert not forest.advance(slot, KEEP, LotteryState(2, 0, 0.0))  # no such child: caller restarts


@pytest.mark.parametrize("spec", ["pig(players=3,goal=20)", "openspiel:pig(players=2,winscore=15)"])
def test_search_runs_on_dice_games(spec):
    if spec.startswith("openspiel"):
        pytest.importorskip("pyspiel")
    game = make_game(spec)
    forest = Forest(game, capacity=402)
    slots = [forest.new_tree(game.initial_state(np.random.default_rng(i)), np.random.default_rng(i)) for i in range(3)]
    BatchedSearch(game, UniformEvaluator(game), SearchConfig()).run(forest, slots, 200)
    for slot in slots:
        assert forest.root_visits(slot).sum() == 200
        assert forest.used[slot] <= 401


@pytest.mark.parametrize(
    "spec", ["pig(players=3,goal=20)", "openspiel:pig(players=3,winscore=12)", "kingdomino(players=2)"]
)
def test_chance_games_self_play_and_train_for_two_generations(spec):
    """The whole learning loop on games with chance, through the OpenSpiel adapter too (three players)
    and on Kingdomino (a drawn row, board symmetries): what a DVC pipeline on the game runs, in one
    process."""
    if spec.startswith("openspiel"):
        pytest.importorskip("pyspiel")
    from pipeline.config import parse_params
    from pipeline.sweeps.training_loop import train_generations

    params = parse_params(
        {
            "game": spec,
            "workers": 1,
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "search": {"simulations": 8},
            "selfplay": {"games": 4, "parallel_games": 4},
            "train": {"epochs": 1},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )
    reports = []
    train_generations(make_game(spec), params, 2, lambda model, report: reports.append(report))
    assert [r.generation for r in reports] == [1, 2]
    assert reports[1].simulations > reports[0].simulations > 0
    assert all(np.isfinite([r.policy_loss, r.value_loss]).all() for r in reports)
