"""Exact solvers, the oracles of evaluation: Connect-4 (Pons' negamax), two-player Pig (value
iteration) and Tic-Tac-Mo (max^n)."""
