"""AlphaZero for N-player games: games, batched search, SENet, and the DVC/MLflow pipeline jobs."""

import os

# numba colours its compiler's messages with colorama, whose exit handler then writes a terminal reset
# (ESC[0m) after a command's last line at a terminal; set before any module imports numba.
os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
