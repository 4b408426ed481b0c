"""The commands the k-in-a-row games bring (pyproject.toml's `alphazero_pipeline.commands`, and
`solve`'s `BringsSolver`): Connect-4 and Tic-Tac-Mo solved, and Pons' benchmark of one network or of
every generation of a run."""
