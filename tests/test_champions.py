"""The champions shipped in `pipeline/champions/`: each loads, matches its card and answers a position
through the commands as a user runs them; unknown names are one error line. No strength thresholds."""

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from shipped import shipped_params_text

from pipeline import champions
from pipeline.commands import analyse, match, play
from pipeline.config import load_params
from pipeline.evaluation.lineage import compute_before
from pipeline.games import make_game
from pipeline.nets import CheckpointError
from pipeline.nets.checkpoint import checkpoint_game, load_checkpoint, save_checkpoint, weights_digest
from pipeline.nets.senet import NetworkShape, SENet
from pipeline.plumbing.failures import UsageError

CARD_KEYS = ("game", "generation", "network", "source", "params", "training", "figures", "reproduce")  # every card's
TRAINING_KEYS = ("selfplay_games", "simulations", "wall", "machine")
ROOT = Path(__file__).resolve().parents[1]
SHIPPED = champions.names()


def command(name: str, *argv: str, stdin: str, cwd: Path) -> subprocess.CompletedProcess:
    """`python -m pipeline name argv` as a user runs it, from a folder of their own, this checkout's code."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [sys.executable, "-m", "pipeline", name, *argv], input=stdin, capture_output=True, text=True, cwd=cwd, env=env
    )


def test_champions_are_shipped():
    assert SHIPPED, "pipeline/champions/ holds no <name>.ckpt"


@pytest.mark.parametrize("name", SHIPPED)
def test_the_card_describes_the_checkpoint(name):
    card = champions.card(name)
    assert not [key for key in CARD_KEYS if key not in card], f"{name}.yaml lacks keys"
    assert not [key for key in TRAINING_KEYS if key not in card["training"]], f"{name}.yaml training"
    path = champions.checkpoint_path(name)
    assert path.stat().st_size < 5 * 2**20, "a shipped champion is a few MB at most"
    assert checkpoint_game(path) == card["game"]
    model = load_checkpoint(path, make_game(card["game"]))
    assert {key: getattr(model.shape, key) for key in card["network"]} == card["network"]
    params = champions.FOLDER / card["params"]
    trained = make_game(load_params(params).game).name  # `kingdomino(players=4)`: its options' defaults spelt out
    assert trained == card["game"], f"{card['params']}: the params that trained it"
    if "params_hash" in card:
        import torch

        assert torch.load(path, weights_only=True)["params_hash"] == card["params_hash"]
    assert champions.summary(name).endswith(f"its card: python -m pipeline champions {name}")


@pytest.mark.parametrize("name", SHIPPED)
def test_a_shipped_champion_carries_the_digest_of_its_weights(name):
    payload = torch.load(champions.checkpoint_path(name), map_location="cpu", weights_only=True)
    assert payload.get("weights_sha256") == weights_digest(payload["state_dict"])


def flip_weight_bytes(path: Path, count: int = 8) -> None:
    """Invert `count` bytes amid the largest tensor's data: the zip archive stays readable, as after a
    bad disk sector or a download cut and resumed wrong, and torch's reader loads it without a word."""
    with zipfile.ZipFile(path) as archive:
        largest = max((i for i in archive.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    data = bytearray(path.read_bytes())
    header = largest.header_offset  # 30 bytes, then the name and the extra field, their lengths at 26 and 28
    name_length, extra_length = (int.from_bytes(data[header + at : header + at + 2], "little") for at in (26, 28))
    start = header + 30 + name_length + extra_length
    middle = start + largest.file_size // 2
    data[middle : middle + count] = bytes(b ^ 0xFF for b in data[middle : middle + count])
    path.write_bytes(data)


def test_a_champion_whose_weights_changed_is_refused_in_one_line(tmp_path):
    damaged = tmp_path / "tictacmo.ckpt"
    damaged.write_bytes(champions.checkpoint_path("tictacmo").read_bytes())
    flip_weight_bytes(damaged)
    with pytest.raises(CheckpointError, match=r"damaged checkpoint \(its weights do not match their checksum\)$"):
        load_checkpoint(damaged)
    done = command("match", str(damaged), "uct:4", stdin="", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: {damaged}: damaged checkpoint (its weights do not match their checksum)"
    ]


@pytest.mark.parametrize("name", SHIPPED)
def test_analyse_answers_a_position_by_name(name, tmp_path):
    done = command("analyse", name, "--json", stdin="\n", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    [result] = [json.loads(line) for line in done.stdout.splitlines()]
    assert result["line"] == 1 and result["moves"] == [] and result["move"] in result["policy"]
    assert sum(result["policy"].values()) == pytest.approx(1, abs=1e-4)


@pytest.mark.parametrize("name", SHIPPED)
def test_a_person_plays_a_game_to_its_end_by_name(name, tmp_path):
    game = make_game(champions.card(name)["game"])
    # every move of the game (cell, column, Kingdomino placement or pick) typed in turn until the end
    moves = "".join(f"{game.format_move(action)}\n" for action in range(game.num_actions)) * 40
    done = command("play", name, "--simulations", "8", stdin=moves, cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == champions.summary(name)
    assert lines[1].startswith("seats: seat 0 (human), seat 1 (az)")
    assert lines[-2].startswith("scores: seat 0 (human) ")
    assert lines[-1] == "draw" or lines[-1].startswith(("winner: seat", "winners: seat"))


@pytest.mark.parametrize("main", [analyse.main, play.main, match.main], ids=["analyse", "play", "match"])
def test_an_unknown_name_is_one_line_listing_the_shipped_ones(main, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit:
        main(["no-such-champion", *(["random"] if main is match.main else [])])
    out, err = capsys.readouterr()
    assert exit.value.code == 1 and out == ""
    assert err.splitlines() == [
        f"error: no-such-champion: neither a checkpoint file nor a shipped champion (shipped: {', '.join(SHIPPED)})"
    ]


def test_a_file_of_that_name_wins_over_a_champion(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = SHIPPED[0]
    assert champions.resolve(name) == champions.checkpoint_path(name)
    (tmp_path / name).write_bytes(b"")
    assert champions.shipped_name(name) is None and champions.resolve(name) == Path(name)


def test_the_champions_are_package_data():
    """A non-editable install carries the checkpoints, cards and params (setuptools' package-data)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools = project["tool"]["setuptools"]
    assert "pipeline*" in setuptools["packages"]["find"]["include"]
    assert (champions.FOLDER / "__init__.py").exists()  # a package, so find includes it
    patterns = setuptools["package-data"]["pipeline.champions"]
    assert {"*.ckpt", "*.yaml", "params/*.yaml"} <= set(patterns)
    packaged = {path for pattern in patterns for path in champions.FOLDER.glob(pattern)}
    for name in SHIPPED:
        params = champions.FOLDER / champions.card(name)["params"]
        assert {champions.checkpoint_path(name), champions.card_path(name), params} <= packaged


def run_init(project: Path, monkeypatch, **changes) -> None:
    """The `init` stage in `project` on a shipped champion's params with `changes`, as `dvc repro` runs it."""
    import yaml

    from stages import init

    data = yaml.safe_load((champions.FOLDER / "params" / "tictacmo.yaml").read_text())
    data["tracking"] = {"tracking_uri": f"sqlite:///{project / 'mlflow.db'}"}
    data.update(changes)
    (project / "params.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(project)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    init.main([])


def test_warm_start_begins_the_run_at_the_champions_weights(tmp_path, monkeypatch):
    run_init(tmp_path, monkeypatch, warm_start="tictacmo")
    started = load_checkpoint(tmp_path / "models/best/gen_0.ckpt").state_dict()
    shipped = load_checkpoint(champions.checkpoint_path("tictacmo")).state_dict()
    assert all(started[key].equal(shipped[key]) for key in shipped)
    assert json.loads((tmp_path / "metrics/start.json").read_text()) == champions.spent("tictacmo")


def test_a_warm_start_with_more_blocks_grows_the_champion_into_the_same_function(tmp_path, monkeypatch):
    shipped = load_checkpoint(champions.checkpoint_path("tictacmo"))
    shape = shipped.shape
    network = {"blocks": shape.blocks + 2, "channels": shape.channels, "se_reduction": shape.se_reduction}
    run_init(tmp_path, monkeypatch, warm_start="tictacmo", network=network)
    started = load_checkpoint(tmp_path / "models/best/gen_0.ckpt")
    assert started.shape.blocks == shape.blocks + 2
    states = torch.rand(4, shape.in_channels, shape.rows, shape.cols)
    with torch.no_grad():
        for before, after in zip(shipped(states), started(states), strict=True):
            assert torch.allclose(before, after, atol=1e-6)


def test_a_warm_start_from_a_network_before_constant_planes_reads_them_as_a_vector(tmp_path, monkeypatch):
    """A Kingdomino network trained before the game declared its constant planes (the first runs, the
    first interim champion) starts a run that reads them as a vector, the same stem off the edge."""
    game = make_game("kingdomino(players=2)")
    network = {"blocks": 1, "channels": 8, "se_reduction": 2}
    torch.manual_seed(0)
    plain = SENet(NetworkShape(*game.observation_shape, game.num_actions, game.num_players, **network))
    save_checkpoint(tmp_path / "plain.ckpt", plain, game.name)
    project = tmp_path / "run"
    project.mkdir()
    run_init(project, monkeypatch, game=game.name, network=network, warm_start=str(tmp_path / "plain.ckpt"))
    started = load_checkpoint(project / "models/best/gen_0.ckpt", game)
    assert started.shape.constant_planes == game.constant_planes() > 0
    planes = torch.from_numpy(game.encode_batch([game.initial_state(np.random.default_rng(0))]))
    with torch.no_grad():
        assert torch.allclose(plain.eval().embed(planes)[..., 1:-1, 1:-1], started.embed(planes)[..., 1:-1, 1:-1])


def test_the_strength_curve_of_a_warm_start_begins_at_the_compute_on_the_champions_card():
    assert compute_before(None) == {"simulations": 0, "hours": 0.0}
    spent = champions.card("connect4")["training"]["spent"]
    assert compute_before("connect4") == spent and spent["simulations"] > 0 and spent["hours"] > 0


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"warm_start": "connect4"}, "trained for game 'connect4'"),
        ({"warm_start": "tictacmo", "network": {"blocks": 2, "channels": 16, "se_reduction": 4}}, "does not match"),
        (
            {"warm_start": "tictacmo", "network": {"blocks": 1, "channels": 32, "se_reduction": 4}},
            "blocks: 4 in the checkpoint, 1 asked for",
        ),
        ({"warm_start": "no-such-champion"}, "neither a checkpoint file nor a shipped champion"),
    ],
)
def test_a_warm_start_that_does_not_fit_is_one_line_naming_the_field(tmp_path, monkeypatch, capsys, changes, reason):
    with pytest.raises(SystemExit):
        run_init(tmp_path, monkeypatch, **changes)
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: warm_start: ") and reason in error and "\n" not in error
    assert not (tmp_path / "models/best/gen_0.ckpt").exists()


@pytest.mark.parametrize("where", ["outside a checkout", "in the checkout"])
def test_match_plays_the_champions_own_game_wherever_it_runs(where, tmp_path):
    """The game is the champion's, not params.yaml's: Connect 3x3 from a Tic-Tac-Mo checkout, and any
    champion where no params.yaml exists (the champion's own params then)."""
    cwd = tmp_path if where == "outside a checkout" else ROOT
    done = command(
        "match", "connect3x3", "random", "--games-per-seating", "1", "--simulations", "4", "--json", stdin="", cwd=cwd
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["first"], result["games"]) == ("connect3x3", 6)  # 3 players: 6 mixed seatings


def test_a_network_searches_with_the_params_it_was_trained_with_unless_told_otherwise(tmp_path, monkeypatch, capsys):
    """play, analyse and match: `--params`, else a shipped champion's own params and card (in a checkout
    whose params.yaml plays its game too: the champion plays as its card says), else params.yaml of the
    same game, else the defaults; one line at a terminal says which, and whence."""
    from pipeline.commands.networks import network_params

    monkeypatch.chdir(tmp_path)  # no params.yaml here: outside a checkout
    own = load_params(champions.params_path("connect4"))
    assert network_params(None, "connect4", "connect4") == own and own.search.c_puct != 3.0
    assert network_params(None, "some.ckpt", "connect4").search.c_puct == 3.0  # a file: the defaults
    (tmp_path / "params.yaml").write_text(shipped_params_text())  # a Tic-Tac-Mo checkout
    assert network_params(None, "connect4", "connect4") == own
    local = shipped_params_text().replace("game: tictacmo", "game: connect4", 1)
    (tmp_path / "params.yaml").write_text(local.replace("c_puct: 3.0", "c_puct: 1.5", 1))
    assert network_params(None, "connect4", "connect4") == own  # the champion, not the checkout's params
    assert network_params(None, "some.ckpt", "connect4").search.c_puct == 1.5  # a file: params.yaml
    given = network_params(str(champions.params_path("connect4")), "some.ckpt", "connect4")
    assert given.search == own.search  # --params, over the params.yaml beside
    with pytest.raises(UsageError, match=r"--params: \S+tictacmo.yaml plays tictacmo, where the game is connect4"):
        network_params(str(champions.params_path("tictacmo")), "connect4", "connect4")  # another game's: refused
    assert capsys.readouterr().err == ""  # not at a terminal
    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    network_params(None, "tictacmo", "tictacmo")
    card = champions.play_search("tictacmo")
    line = f"search: c_puct {card['c_puct']:.4g}, fpu_reduction {card['fpu_reduction']:.4g}, root puct"
    assert capsys.readouterr().err == f"{line} (from the tictacmo champion's card)\n"


def test_shipped_means_the_cards_search_in_a_play_time_sweep_whatever_params_hold():
    """`sweep --play tictacmo --params copy.yaml`: the `shipped` setting is how the champion plays (its
    card's `play.search`), not the training search the params file holds; any other network's is its params'."""
    from pipeline.commands.networks import card_search

    copy = load_params(champions.params_path("tictacmo"))
    card = champions.play_search("tictacmo")
    assert card and copy.search.c_puct != card["c_puct"]
    shipped = card_search(copy, "tictacmo").search
    assert (shipped.c_puct, shipped.fpu_reduction) == (card["c_puct"], card["fpu_reduction"])
    assert card_search(copy, "models/best/gen_3.ckpt") == copy


def test_champions_prints_a_cards_whole_text_by_name(capsys):
    from pipeline.commands.champions import main

    main(["kingdomino"])
    assert capsys.readouterr().out == champions.card_path("kingdomino").read_text()
    assert "in all 20 generations" in champions.summary("kingdomino")
    with pytest.raises(SystemExit):
        main(["chess"])
    assert capsys.readouterr().err.startswith("error: chess: no such champion; expected one of connect3x3")


def test_a_taught_champion_says_so_in_its_summary(tmp_path, monkeypatch):
    """A generation 0 taught by a player, with no self-play, is summed up as taught, not as 0 generations."""
    card = yaml.safe_load(champions.card_path("kingdomino").read_text())
    card["training"].update(generations=0, selfplay_games=0, simulations=0)
    (tmp_path / "taught.yaml").write_text(yaml.safe_dump(card))
    monkeypatch.setattr(champions, "FOLDER", tmp_path)
    assert "no self-play: taught by greedy, 2000 games" in champions.summary("taught")


def test_a_champion_plays_with_the_search_its_card_tuned_for_play(tmp_path, monkeypatch):
    """`play.search` on a card (what `sweep --play` confirmed) overrides its training params' search
    wherever the champion's own params are used, and shows in its summary; a bad key is one line."""
    from pipeline.commands.networks import network_params

    (tmp_path / "params").mkdir()
    (tmp_path / "params" / "tuned.yaml").write_text(champions.params_path("tictacmo").read_text())
    (tmp_path / "tuned.ckpt").write_bytes(champions.checkpoint_path("tictacmo").read_bytes())
    card = yaml.safe_load(champions.card_path("tictacmo").read_text())
    card["params"] = "params/tuned.yaml"
    card["play"] = {"search": {"c_puct": 1.25, "fpu_reduction": 0.3}}
    (tmp_path / "tuned.yaml").write_text(yaml.safe_dump(card))
    monkeypatch.setattr(champions, "FOLDER", tmp_path)
    monkeypatch.chdir(tmp_path)
    params = network_params(None, "tuned", "tictacmo")
    assert (params.search.c_puct, params.search.fpu_reduction) == (1.25, 0.3)
    assert params.network == load_params(tmp_path / "params" / "tuned.yaml").network
    assert "plays with c_puct 1.25, fpu_reduction 0.3 (sweep --play)" in champions.summary("tuned")
    card["play"] = {"search": {"c_pucts": 1.25}}
    (tmp_path / "tuned.yaml").write_text(yaml.safe_dump(card))
    with pytest.raises(ValueError, match=r"tuned.yaml: play.search: search.c_pucts: unknown key") as error:
        network_params(None, "tuned", "tictacmo")
    assert "\n" not in str(error.value)
