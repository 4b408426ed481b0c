"""Evaluation: the experiments on a champion (Petosa & Balch's figures, ratings, Connect-4 benchmarks), the
report and its sections, the strength-against-compute curve, and runs compared side by side."""
