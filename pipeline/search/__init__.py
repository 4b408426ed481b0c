"""Batched PUCT/UCT search; sees leaves judged only through an `Evaluator` (no torch here)."""

from pipeline.search.evaluator import CachingEvaluator, Evaluator, RolloutEvaluator, UniformEvaluator
from pipeline.search.forest import Forest
from pipeline.search.mcts import BatchedSearch, SearchConfig

__all__ = [
    "BatchedSearch",
    "CachingEvaluator",
    "Evaluator",
    "Forest",
    "RolloutEvaluator",
    "SearchConfig",
    "UniformEvaluator",
]
