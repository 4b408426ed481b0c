"""k-in-a-row games (Tic-Tac-Toe, Tic-Tac-Mo, Connect-4, Connect 3x3) and what they bring: their rules
(`rules.py`) and Pons' test positions (floor 1), the Connect-4 and Tic-Tac-Mo solvers (`solvers/`, 2),
alpha-beta and the perfect player (`players/`, 3), and Connect-4's experiments (`experiments/`, 7)."""
