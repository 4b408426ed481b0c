"""Batched PUCT/UCT search; sees leaves judged only through an `Evaluator` (no torch here)."""

from pipeline.search.evaluator import Evaluator, RolloutEvaluator, UniformEvaluator
from pipeline.search.mcts import BatchedSearch, SearchConfig
from pipeline.search.tree import Tree

__all__ = ["BatchedSearch", "Evaluator", "RolloutEvaluator", "SearchConfig", "Tree", "UniformEvaluator"]
