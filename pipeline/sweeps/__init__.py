"""Optuna sweeps: the study and its trials (each a short training run in one process), its storage and
its report."""
