"""Networks: the SENet, its Lightning module, checkpoints, and the search-facing evaluator."""

from pipeline.plumbing.failures import CheckpointError, InferenceServerError

__all__ = ["CheckpointError", "InferenceServerError"]
