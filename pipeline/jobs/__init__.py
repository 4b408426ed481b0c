"""The stage jobs: self-play, training and gating, the replay buffer they share, MLflow tracking and the
stages' entry point; called alike by the DVC stages, the sweeps' trials and the tests."""
