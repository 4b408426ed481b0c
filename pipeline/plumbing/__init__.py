"""The plumbing every floor stands on: atomic writes, clipped and masked lines, process owners,
workers' start-up arguments, progress bars, stores' URLs and torch threads. Nothing here knows a game,
a network or a run."""
