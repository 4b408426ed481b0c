"""The games this project ships, each family a package above the library it extends: k-in-a-row
(`connect/`), Pig (`pig/`) and Kingdomino (`kingdomino/`). Each holds its rules, and what it brings
beyond them (solvers, players, experiments, test positions), and is registered in pyproject.toml's
`alphazero_pipeline.games` entry points exactly as a user's game package is (docs/adding-a-game.md)."""
