"""Networks: the SENet, its Lightning module, checkpoints, and the search-facing evaluator."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, damaged or for another game or shape. Defined here, free of
    torch, so that commands can report it without importing torch."""
