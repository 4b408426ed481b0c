"""Tuning studies: the Optuna sweeps (the study and its trials, each a short training run in one process,
its storage and its report; the play-time study), and the population of runs trained side by side on
Ray Tune (`population.py`, its report `population_report.py`)."""
