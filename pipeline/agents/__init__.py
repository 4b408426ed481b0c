"""Players: AlphaZero, UCT with random rollouts, greedy value play, uniform random and fixed Pig
strategies, all behind `Agent`."""

from pipeline.agents.base import Agent, RandomAgent
from pipeline.agents.greedy import GreedyValueAgent
from pipeline.agents.pig_policy import PigPolicyAgent, pig_table_agent
from pipeline.agents.search_agent import PlayConfig, SearchAgent, uct_agent

__all__ = [
    "Agent",
    "GreedyValueAgent",
    "PigPolicyAgent",
    "PlayConfig",
    "RandomAgent",
    "SearchAgent",
    "pig_table_agent",
    "uct_agent",
]
