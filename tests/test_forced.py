"""KataGo's forced playouts and policy target pruning (pipeline/search/forced.py): with root noise
every child gets its forced share of playouts, the policy target takes the unproductive ones back,
and without noise nothing changes. Real searches with small budgets."""

import math

import numpy as np
import pytest
from test_gumbel import TargetCells

from pipeline.agents.search_agent import PlayConfig, SearchAgent
from pipeline.config import ConfigError, parse_params
from pipeline.games import make_game
from pipeline.search import SearchConfig


def searched(k, noise, simulations=200, seed=3):
    """A Tic-Tac-Toe root where the prior loves cell 4 and every cell is worth the same: PUCT alone
    pours its visits into cell 4."""
    game = make_game("tictactoe")
    evaluator = TargetCells(game, {}, favourite=4, prior_logit=5.0)
    config = SearchConfig(c_puct=1.5, dirichlet_alpha=0.3, forced_playouts=k)
    agent = SearchAgent(game, evaluator, config, PlayConfig(simulations=simulations, add_noise=noise), "az")
    agent.begin(0, game.initial_state(), np.random.default_rng(seed))
    ((action, policy),) = agent.act([0])
    forest = agent.forest
    slot = agent.slots[0]
    return forest.root_visits(slot), forest.root_priors[slot], action, policy


def test_forced_playouts_give_every_child_its_share_with_noise():
    visits, priors, _, _ = searched(k=2.0, noise=True)
    total = visits.sum()
    assert all(visits[c] >= math.floor(math.sqrt(2.0 * priors[c] * total)) - 1 for c in range(9))
    plain, _, _, _ = searched(k=0.0, noise=True)
    assert (visits > 0).sum() >= (plain > 0).sum()
    assert visits.min() > plain.min(), "forcing visits the child plain PUCT neglects most"


def test_the_target_takes_the_forced_playouts_back_and_the_move_is_unchanged():
    visits, _, action, policy = searched(k=2.0, noise=True)
    assert action == int(np.argmax(visits))
    assert policy.sum() == pytest.approx(1.0)
    best = int(np.argmax(visits))
    raw = visits / visits.sum()
    assert policy[best] > raw[best], "the most visited child gains the mass the others lose"
    assert np.all(policy / policy[best] <= raw / raw[best] + 1e-6), "no child gains playouts on the best one"
    assert (policy == 0).sum() > (visits == 0).sum(), "children left with one playout are dropped"


def test_without_noise_nothing_is_forced_or_pruned():
    forced, _, _, forced_policy = searched(k=2.0, noise=False)
    plain, _, _, plain_policy = searched(k=0.0, noise=False)
    assert np.array_equal(forced, plain)
    assert np.allclose(forced_policy, plain_policy)


def test_a_negative_k_is_refused_in_one_line():
    with pytest.raises(ConfigError) as error:
        parse_params({"game": "tictactoe", "search": {"forced_playouts": -1.0}, "generations": [{"gen": 1, "prev": 0}]})
    assert "search.forced_playouts" in str(error.value) and "\n" not in str(error.value)
