"""Standard test positions shipped with the package, so a benchmark runs on any machine.

`connect4/`: Pascal Pons' six Connect-4 test sets and the per-column labels of four of them, as
redistributed by AlphaZero.jl (MIT licence); its README gives the format and the published results.
"""

from pathlib import Path

CONNECT4 = Path(__file__).parent / "connect4"
