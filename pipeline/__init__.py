"""AlphaZero for N-player games: games, batched search, SENet, and the DVC/MLflow pipeline jobs."""
