"""Networks: the SENet, its Lightning module, checkpoints, and the search-facing evaluator."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, damaged or for another game or shape. Defined here, free of
    torch, so that commands can report it without importing torch."""


class InferenceServerError(RuntimeError):
    """The inference server could not start, or stopped while workers waited for it (`server.py`):
    one line, free of torch like `CheckpointError`."""
