"""Gumbel AlphaZero's root (pipeline/search/gumbel.py): sequential halving's schedule, choosing by
searched value over the prior, the improved policy target, reproducible self-play, the params switch
and max^n with three players. Every search here is real, with small budgets."""

import numpy as np
import pytest
import torch

from pipeline.agents.recipes import search_config
from pipeline.agents.search_agent import PlayConfig, SearchAgent
from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.games.base import rotate_to_mover
from pipeline.jobs.selfplay import run_selfplay
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.search import BatchedSearch, Forest, SearchConfig, UniformEvaluator
from pipeline.search.gumbel import GumbelSearch, halving_phases


def play(game, moves):
    state = game.initial_state()
    for move in moves:
        state, _ = game.step(state, move)
    return state


def gumbel_search(game, state, evaluator, simulations, considered=16, noise=False, seed=0):
    config = SearchConfig(root="gumbel", gumbel_considered=considered)
    forest = Forest(game, capacity=2 * simulations + 16)
    slot = forest.new_tree(state, np.random.default_rng(seed))
    search = BatchedSearch(game, evaluator, config)
    (choice,) = GumbelSearch(search).run(forest, [slot], [simulations], [noise])
    return forest, slot, search, choice


def holds(game, state, seat, action):
    """Whether `seat` has a stone on the cell of `action` (the bottom cell of a column in drop games)."""
    cell = (game.rows - 1) * game.cols + action if game.gravity else action
    return bool(state.boards[seat] >> int(game._cell_bits[cell]) & 1)


class TargetCells:
    """A test double: seat s is worth `worth` while it holds its target cell and -`worth` while another
    seat holds it, 0 otherwise (absolute seats, rotated to the mover); priors favour `favourite`."""

    def __init__(self, game, targets, favourite, worth=0.9, prior_logit=3.0):
        self.game, self.targets, self.favourite = game, targets, favourite
        self.worth, self.prior_logit = worth, prior_logit

    def value(self, state):
        values = np.zeros(self.game.num_players)
        for seat, target in self.targets.items():
            if holds(self.game, state, seat, target):
                values[seat] = self.worth
            elif any(holds(self.game, state, other, target) for other in range(self.game.num_players)):
                values[seat] = -self.worth
        return values

    def evaluate(self, states):
        logits = np.zeros((len(states), self.game.num_actions), dtype=np.float32)
        logits[:, self.favourite] = self.prior_logit
        values = [rotate_to_mover(self.value(s), self.game.to_play(s)) for s in states]
        return logits, np.array(values)


# --- (1) sequential halving --------------------------------------------------------------------
def test_halving_phases_follow_the_paper():
    # ceil(log2 4) = 2 phases: 4 actions x floor(16 / (2 * 4)) = 2, then 2 actions x floor(16 / 4) = 4
    assert halving_phases(4, 16) == [(4, 8), (2, 8)]
    assert halving_phases(4, 8) == [(4, 4), (2, 4)]
    assert halving_phases(1, 5) == [(1, 5)]
    # fewer simulations than considered actions: the best-ranked ones get one each
    assert halving_phases(16, 8) == [(16, 8)]
    for m, n in [(7, 16), (16, 50), (3, 9), (5, 100), (2, 7)]:
        assert sum(steps for _, steps in halving_phases(m, n)) == n


@pytest.mark.parametrize(("simulations", "expected"), [(16, [2, 2, 6, 6]), (8, [1, 1, 3, 3])])
def test_sequential_halving_spends_the_budget_in_the_papers_schedule(simulations, expected):
    game = make_game("connect4")
    # uniform priors and no noise: the considered four are columns 0-3 (ties to the lower action)
    forest, slot, _, choice = gumbel_search(game, game.initial_state(), UniformEvaluator(game), simulations, 4)
    visits = forest.root_visits(slot)
    assert visits.sum() == simulations
    assert np.all(visits[4:] == 0)
    assert sorted(visits[:4]) == expected
    assert visits[choice.action] == max(expected)  # the move is one of the last phase's actions


def test_noise_draws_the_considered_actions_from_the_trees_generator():
    game = make_game("connect4")
    seen = set()
    for seed in range(6):
        forest, slot, _, _ = gumbel_search(game, game.initial_state(), UniformEvaluator(game), 8, 2, True, seed)
        seen.add(tuple(np.flatnonzero(forest.root_visits(slot))))
        again, other, _, _ = gumbel_search(game, game.initial_state(), UniformEvaluator(game), 8, 2, True, seed)
        assert np.array_equal(again.root_visits(other), forest.root_visits(slot))
    assert len(seen) > 1  # different seeds consider different pairs; the same seed the same pair


# --- (2) the searched value beats the prior ------------------------------------------------------
def test_gumbel_without_noise_picks_the_best_move_over_the_priors_favourite():
    game = make_game("connect4")
    evaluator = TargetCells(game, {0: 5, 1: 5}, favourite=0)  # X wants the bottom of column 5, priors say 0
    state = game.initial_state()
    _, _, _, choice = gumbel_search(game, state, evaluator, simulations=8)
    assert choice.action == 5
    # PUCT with the same 8 simulations follows the prior: the test needs the Gumbel root to pass
    forest = Forest(game, capacity=32)
    slot = forest.new_tree(state, np.random.default_rng(0))
    BatchedSearch(game, evaluator, SearchConfig()).run(forest, [slot], 8)
    assert int(np.argmax(forest.root_visits(slot))) == 0


# --- (3) the improved policy ---------------------------------------------------------------------
def test_improved_policy_is_a_distribution_over_legal_moves_that_favours_the_best_q():
    game = make_game("tictactoe")
    state = play(game, [0, 8])  # X to move, squares 0 and 8 taken
    evaluator = TargetCells(game, {0: 4, 1: 4}, favourite=2, worth=0.5)
    forest, slot, search, choice = gumbel_search(game, state, evaluator, simulations=16, considered=4)
    policy = choice.policy
    assert policy.dtype == np.float32 and policy.sum() == pytest.approx(1.0, abs=1e-6)
    assert policy[0] == 0 and policy[8] == 0
    root = forest.roots[slot]
    visits = forest.visits[root]
    q = np.where(visits > 0, forest.value_sums[root, :, 0] / np.maximum(visits, 1), -np.inf)
    best = int(np.argmax(q))
    assert best == 4
    prior = forest.priors[root]
    assert policy[best] > prior[best] + 0.2
    assert choice.action == best


# --- (4) reproducible self-play --------------------------------------------------------------------
def tiny_gumbel_params(**search):
    return parse_params(
        {
            "game": "tictactoe",
            "seed": 3,
            "workers": 1,
            "network": {"blocks": 1, "channels": 8, "se_reduction": 2},
            "search": {"simulations": 8, "root": "gumbel", "gumbel_considered": 4, **search},
            "selfplay": {"games": 6, "parallel_games": 6, "full_search_fraction": 0.5, "fast_simulations": 3},
            "generations": [{"gen": 1, "prev": 0}],
        }
    )


def test_same_seed_same_gumbel_self_play_games():
    game = make_game("tictactoe")
    params = tiny_gumbel_params()
    assert search_config(params).root == "gumbel" and search_config(params).gumbel_considered == 4
    torch.manual_seed(0)
    model = SENet(NetworkShape.for_game(game, **params.network.model_dump()))
    first = run_selfplay(game, model, params, generation=1, progress=False)
    second = run_selfplay(game, model, params, generation=1, progress=False)
    for key in ("states", "values"):
        assert np.array_equal(first.samples[key], second.samples[key])
    # torch's thread count follows the free cores, so network outputs may differ in the last bits
    assert np.allclose(first.samples["policies"], second.samples["policies"], atol=1e-5)
    policies = first.samples["policies"]
    assert np.allclose(policies.sum(axis=1), 1.0, atol=1e-5)
    # improved policies, not visit shares: with 8 simulations visit shares would be multiples of 1/8
    assert not np.allclose(policies * 8, np.round(policies * 8))
    other = run_selfplay(game, model, params.model_copy(update={"seed": 4}), generation=1, progress=False)
    assert not np.array_equal(other.samples["states"], first.samples["states"])


# --- (5) the params switch -----------------------------------------------------------------------
def test_unknown_root_is_one_line_naming_the_field():
    with pytest.raises(ConfigError) as error:
        parse_params({"game": "tictactoe", "search": {"root": "foo"}, "generations": [{"gen": 1, "prev": 0}]})
    message = str(error.value)
    assert "search.root" in message and "'foo'" in message and "\n" not in message
    with pytest.raises(ConfigError, match="search.gumbel_considered"):
        parse_params({"game": "tictactoe", "search": {"gumbel_considered": 0}, "generations": [{"gen": 1, "prev": 0}]})


# --- (6) three players ---------------------------------------------------------------------------
@pytest.mark.parametrize("opening", [[], [14], [14, 13]])
def test_three_player_root_player_maximises_its_own_entry(opening):
    game = make_game("tictacmo")
    state = play(game, opening)
    mover = game.to_play(state)
    assert mover == len(opening)
    targets = {0: 6, 1: 7, 2: 8}  # each seat wants its own cell; priors favour cell 0, worth nothing
    evaluator = TargetCells(game, targets, favourite=0)
    forest, slot, _, choice = gumbel_search(game, state, evaluator, simulations=16)  # all legal moves considered
    assert choice.action == targets[mover]
    assert int(np.argmax(choice.policy)) == targets[mover]
    assert forest.players[forest.roots[slot]] == mover


def test_search_agent_plays_gumbel_with_playout_cap_and_reuse():
    game = make_game("tictacmo")
    config = SearchConfig(root="gumbel", gumbel_considered=4)
    play_config = PlayConfig(simulations=8, add_noise=True, full_search_fraction=0.5, fast_simulations=2)
    agent = SearchAgent(game, UniformEvaluator(game), config, play_config, "gumbel")
    state = game.initial_state()
    agent.begin(0, state, np.random.default_rng(1))
    targets = 0
    while not game.is_terminal(state):
        ((action, policy),) = agent.act([0])
        assert game.legal_mask(state)[action]
        if policy is not None:
            targets += 1
            assert policy.sum() == pytest.approx(1.0, abs=1e-6) and np.all(policy[~game.legal_mask(state)] == 0)
        state, _ = game.step(state, action)
        agent.observe(0, action, state)
    assert 0 < targets < game.ply(state)
    assert agent.simulations < 8 * game.ply(state)
