"""Connect-4's own players, built through `rules.py`'s `CONNECT4_PLAYERS`: Parikh & Wu's alpha-beta and
the solver's perfect play."""
