"""The failures a user's input or a user's game causes, defined on the ground floor so that every floor
can raise them and the entry point (`harness/entry.py`) turns each into one line without importing the
floors that raise them (torch, the arena, MLflow)."""


class ConfigError(ValueError):
    """A bad params file; the message is one line naming the field and what was expected."""


class UsageError(ValueError):
    """A command-line value that parses but cannot be used (a budget of 0, an unknown player)."""


class GameFault(ValueError):
    """A game's own code broke the contract (`games/base.py`'s `Game`): a shape, a value or an exception."""


class IllegalMove(ValueError):
    """A move that is unknown or not legal in the given position (human input, move strings)."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, damaged or for another game or shape."""


class InferenceServerError(RuntimeError):
    """The inference server could not start, or stopped while workers waited for it (`nets/server.py`)."""


class BackendError(RuntimeError):
    """Games cannot be played where the params say (Ray missing or unreachable): one line naming the param."""


class DataError(ValueError):
    """A replay or self-play file that is missing, damaged or of another shape."""


class TrackingError(ValueError):
    """The MLflow store does not hold what the pipeline's files say it should."""
