"""Players: AlphaZero, UCT with random rollouts, greedy value play and uniform random, all behind `Agent`."""

from pipeline.agents.base import Agent, RandomAgent
from pipeline.agents.greedy import GreedyValueAgent
from pipeline.agents.search_agent import PlayConfig, SearchAgent, uct_agent

__all__ = ["Agent", "GreedyValueAgent", "PlayConfig", "RandomAgent", "SearchAgent", "uct_agent"]
