"""Many games at once between any agents: the arena, the worker backends (a process pool or Ray
tasks), the cache of finished matches, and Bradley-Terry ratings."""


class BackendError(RuntimeError):
    """Games cannot be played where the params say (Ray missing or unreachable): one line naming the
    param. Defined here, free of the arena and the agents, so that every command can report it."""
