"""Pig, the dice game, and what two-player Pig brings: its rules (`rules.py`, floor 1), value iteration
(`solver.py`, 2), the optimal and hold-at-N tables as players (`players.py`, 3) and the oracle
experiment (`oracle.py`, 7)."""
