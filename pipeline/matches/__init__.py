"""Many games at once between any agents: the arena, the worker backends (a process pool or Ray
tasks), the cache of finished matches, and Bradley-Terry ratings."""

from pipeline.plumbing.failures import BackendError

__all__ = ["BackendError"]
