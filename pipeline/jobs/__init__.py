"""The jobs: self-play, training, gating, evaluation, the report, MLflow tracking and Optuna sweeps,
called alike by the DVC stages, the sweep's trials and the tests."""
