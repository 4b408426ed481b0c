"""Exact solvers of the k-in-a-row games: Connect-4 (Pons' negamax), Tic-Tac-Mo (max^n)."""
