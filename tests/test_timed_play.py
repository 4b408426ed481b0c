"""Players that move by wall time (`uct:0.5s`, `mce:200ms`, `match --move-time`): Kingdomino's anchor
compares players at equal time a move. What is asserted is behaviour, never a duration: a timed search
stops at its cap, runs at least one step however short its time, and a timed match plays."""

import json

import numpy as np
import pytest

from pipeline.agents.monte_carlo import MonteCarloAgent
from pipeline.agents.search_agent import CLOCK_STEP, PlayConfig, SearchAgent, uct_agent
from pipeline.games import make_game
from pipeline.search import RolloutEvaluator, SearchConfig


def searched(agent, game, seed: int = 0) -> int:
    """Simulations one move of `agent` ran from the initial position."""
    agent.begin(0, game.initial_state(np.random.default_rng(seed)), np.random.default_rng(seed))
    agent.act([0])
    return agent.simulations


def test_a_timed_search_stops_at_its_cap_when_time_is_plenty():
    game = make_game("tictactoe")
    assert searched(uct_agent(game, 20, seed=0, seconds=3600.0), game) == 20


def test_a_timed_search_stops_when_its_tree_is_full_and_plays_a_whole_game_in_it(monkeypatch):
    """Plenty of time and no cap: the tree's room bounds each move, and reuse never overflows it."""
    from pipeline.agents import search_agent
    from pipeline.search.forest import Forest

    game = make_game("tictactoe")
    monkeypatch.setattr(search_agent, "TIMED_TREE_BYTES", 100 * Forest.node_bytes(game))
    agent = uct_agent(game, 10**5, seed=0, seconds=3600.0)
    assert agent.forest.capacity == 100
    moves, rng = [], np.random.default_rng(0)
    state = game.initial_state(rng)
    agent.begin(0, state, rng)
    while not game.is_terminal(state):
        before = agent.simulations
        ((action, _),) = agent.act([0])
        moves.append(agent.simulations - before)
        assert agent.forest.used[0] <= agent.forest.capacity
        state, _ = game.step(state, action, rng)
        agent.observe(0, action, state)
    assert moves[0] == 49, "the 99 nodes beside the root, a simulation taking at most two"
    assert all(0 < m <= 49 for m in moves)


def test_a_timed_search_runs_one_clock_step_when_time_is_up_at_once():
    game = make_game("tictactoe")
    assert searched(uct_agent(game, 1000, seed=0, seconds=1e-9), game) == CLOCK_STEP


def test_a_timed_search_with_parallel_leaves_runs_one_step_of_all_its_walkers():
    """k walkers wider than the clock step: the step between two looks at the clock grows to k."""
    game = make_game("connect4")
    config = SearchConfig(selection="ucb1", parallel_leaves=3 * CLOCK_STEP)
    agent = SearchAgent(
        game, RolloutEvaluator(game, 0), config, PlayConfig(simulations=1000, seconds=1e-9), "uct-leaves"
    )
    assert searched(agent, game) == 3 * CLOCK_STEP


def test_a_timed_mce_with_no_time_left_tries_each_move_once_like_mce_with_that_many_playouts():
    game = make_game("kingdomino(players=2)")
    state = game.initial_state(np.random.default_rng(1))
    legal = game.legal_actions(state)
    timed = MonteCarloAgent(game, 0, seconds=1e-9).choose(state, np.random.default_rng(2))
    counted = MonteCarloAgent(game, len(legal)).choose(state, np.random.default_rng(2))
    assert timed == counted


def test_gumbel_search_refuses_a_time_a_move_in_one_line():
    game = make_game("tictactoe")
    with pytest.raises(ValueError, match="needs search.root puct"):
        SearchAgent(game, RolloutEvaluator(game, 0), SearchConfig(root="gumbel"), PlayConfig(seconds=0.1), "az")


def test_match_plays_timed_players_and_refuses_a_time_below_zero(capsys):
    from pipeline.commands.match import main

    main(["mce:1ms", "uct:1ms", "--game", "kingdomino(players=2)", "--games-per-seating", "1", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert (result["first"], result["second"], result["games"]) == ("mce:1ms", "uct:1ms", 2)
    with pytest.raises(SystemExit):
        main(["tictactoe", "uct:4", "--move-time", "0"])
    assert capsys.readouterr().err == "error: --move-time: expected seconds above 0, at most 3,600, got 0.0\n"
