"""Connect-4's own evaluation experiments, found through `rules.py`'s `CONNECT4_EXPERIMENTS`: the
alpha-beta table, games against perfect play and Pons' benchmark (`pons.py`, which the
`connect4_benchmark` command shares)."""
