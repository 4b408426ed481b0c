"""Players: AlphaZero, UCT with random rollouts, greedy value play, uniform random, the Kingdomino
anchor's greedy and flat Monte Carlo, fixed Pig strategies, Connect-4's alpha-beta and perfect player,
all behind `Agent` (`base.py`). Import each from its module: the package imports none of them, so that
the player grammar (`names.py`) reads a command's arguments before torch is imported."""
