"""What every DVC stage and command runs inside: one-line errors for bad input and threads that follow
the free cores (`entry.py`), and the run's MLflow tracking (`tracking.py`). Not stage jobs themselves, so
they live apart from `jobs/`, which a stage and a command import only for the work they do."""
