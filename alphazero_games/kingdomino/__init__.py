"""Kingdomino (the Kingdomino notes): the pure-Python reference rules (`rules.py`), the numba kernels of its hot
paths (`rule_kernels.py`) and the game `make_game` builds on them (`compiled.py`)."""
