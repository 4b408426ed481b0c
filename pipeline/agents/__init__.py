"""Players: AlphaZero, UCT with random rollouts, greedy value play, uniform random and fixed Pig
strategies, all behind `Agent`."""

from pipeline.agents.base import Agent, RandomAgent
from pipeline.agents.greedy import GreedyValueAgent
from pipeline.agents.pig_policy import PigPolicyAgent, hold_at_rolls, optimal_rolls
from pipeline.agents.search_agent import PlayConfig, SearchAgent, uct_agent

__all__ = [
    "Agent",
    "GreedyValueAgent",
    "PigPolicyAgent",
    "PlayConfig",
    "RandomAgent",
    "SearchAgent",
    "hold_at_rolls",
    "optimal_rolls",
    "uct_agent",
]
