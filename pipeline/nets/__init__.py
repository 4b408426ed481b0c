"""Networks: the SENet, its Lightning module, checkpoints, and the search-facing evaluator."""
