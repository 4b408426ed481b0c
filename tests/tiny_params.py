"""The tiny Tic-Tac-Toe params the sweep and population tests train with: the default params.yaml with a
1 x 8 network, 4 simulations, 4 games a generation of one epoch, MLflow in `folder`."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def tiny_tictactoe(folder: Path) -> dict:
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    data.update(game="tictactoe", workers=1)
    data["network"] = {"blocks": 1, "channels": 8, "se_reduction": 2}
    data["search"]["simulations"] = 4
    data["selfplay"].update(games=4, parallel_games=8)
    data["train"]["epochs"] = 1
    data["tracking"]["tracking_uri"] = f"sqlite:///{folder / 'mlflow.db'}"
    return data
