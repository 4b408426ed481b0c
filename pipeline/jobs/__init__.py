"""The stage jobs: self-play, training and gating, and the replay buffer they share; called alike by the
DVC stages, the sweeps' trials and the tests. What every stage and command runs inside (one-line errors,
MLflow tracking) is `pipeline/harness/`."""
