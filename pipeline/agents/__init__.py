"""Players: AlphaZero, UCT with random rollouts and uniform random, all behind `Agent`."""

from pipeline.agents.base import Agent, RandomAgent
from pipeline.agents.search_agent import PlayConfig, SearchAgent, uct_agent

__all__ = ["Agent", "PlayConfig", "RandomAgent", "SearchAgent", "uct_agent"]
