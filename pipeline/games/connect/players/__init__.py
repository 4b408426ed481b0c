"""Connect-4's own players, built through `rules.py`'s `CONNECT4_PLAYERS`: seed 004's alpha-beta and
the solver's perfect play."""
