"""The match cache: finished games come back as saved, bad entries are replayed, keys are stable."""

import json

import numpy as np
import pytest

from pipeline.agents.base import RandomAgent
from pipeline.games import make_game
from pipeline.matches.arena import GameRecord, mixed_seatings, play_games
from pipeline.matches.bradley_terry import fit_bradley_terry, pairwise_results
from pipeline.matches.cache import MatchCache

PARTS = {
    "game": "tictacmo",
    "agents": ["gen_1|alphazero|sha256:ab12", "uct50|uct|seed=3"],
    "play": {"simulations": 50, "temperature": 0.0},
    "seatings": [[0, 1, 1], [1, 0, 0]],
    "seed": 7,
}


def _games():
    return [
        {"seating": ["a", "b", "b"], "scores": [1.0, -1.0, -1.0]},
        {"seating": ["b", "a", "a"], "scores": [0, 0, 0]},
    ]


def test_played_games_round_trip_and_rate(tmp_path):
    game = make_game("tictacmo")
    agents = [RandomAgent(game, "first"), RandomAgent(game, "second")]
    seatings = mixed_seatings(game.num_players) * 2
    records, _ = play_games(game, [[agents[i] for i in s] for s in seatings], seed=3, parallel=4)
    cache = MatchCache(tmp_path / "matches")
    key = cache.key(**PARTS)
    assert cache.get(key) is None
    saved = [{"seating": r.seating, "scores": r.scores.tolist(), "actions": r.actions} for r in records]
    cache.put(key, saved, metadata={"seconds": 1.5})
    found = MatchCache(tmp_path / "matches").get(key)
    assert found == saved
    assert [p.name for p in (tmp_path / "matches").iterdir()] == [f"{key}.json"]
    again = [GameRecord(g["seating"], scores=np.array(g["scores"])) for g in found]
    assert pairwise_results(again) == pairwise_results(records)
    assert set(fit_bradley_terry(pairwise_results(again))) == {"first", "second"}


@pytest.mark.parametrize(
    "content",
    [
        '{"key": "KEY", "games": [{"seating": ["a", "b"], "scores": [1.0, -1',  # cut off mid-write
        '{"key": "another", "games": []}',  # some other match's entry
        '{"key": "KEY", "games": [{"seating": ["a", "b"], "scores": [1.0]}]}',  # a score missing
        '{"key": "KEY", "games": [{"seating": ["a", "b"], "scores": [NaN, 1.0]}]}',
        '{"key": "KEY", "games": [{"scores": [1.0, -1.0]}]}',
        "[]",
    ],
)
def test_a_corrupt_entry_is_reported_in_one_line_and_replayed(tmp_path, caplog, content):
    cache = MatchCache(tmp_path)
    key = cache.key(**PARTS)
    cache.path(key).write_text(content.replace("KEY", key))
    assert cache.get(key) is None
    (line,) = caplog.messages
    assert str(cache.path(key)) in line and "played again" in line and "\n" not in line
    cache.put(key, _games())
    assert cache.get(key) == _games()


def test_a_well_formed_entry_edited_by_hand_is_replayed_not_trusted(tmp_path, caplog):
    """One game left of two (40 in the issue), still whole, valid games: its digest no longer matches."""
    import json

    cache = MatchCache(tmp_path)
    key = cache.key(**PARTS)
    cache.put(key, _games())
    entry = json.loads(cache.path(key).read_text())
    entry["games"] = entry["games"][:1]
    cache.path(key).write_text(json.dumps(entry))
    assert cache.get(key) is None
    assert "do not match their digest" in caplog.messages[0]
    del entry["games_sha256"]  # an entry written before digests: read as it was
    cache.path(key).write_text(json.dumps(entry))
    assert cache.get(key) == _games()[:1]


def test_the_key_changes_with_every_part_and_not_with_dict_order():
    key = MatchCache.key(**PARTS)
    assert key == MatchCache.key(**dict(reversed(PARTS.items())))
    assert key == MatchCache.key(**{**PARTS, "play": {"temperature": 0.0, "simulations": 50}})
    changed = [
        {**PARTS, "game": "connect4"},
        {**PARTS, "agents": ["gen_1|alphazero|sha256:ab13", "uct50|uct|seed=3"]},
        {**PARTS, "agents": list(reversed(PARTS["agents"]))},
        {**PARTS, "play": {"simulations": 51, "temperature": 0.0}},
        {**PARTS, "seatings": [[0, 1, 1], [1, 0, 1]]},
        {**PARTS, "seed": 8},
        {**PARTS, "workers": 2},
    ]
    assert len({key} | {MatchCache.key(**parts) for parts in changed}) == len(changed) + 1
    with pytest.raises(TypeError, match="plain JSON values"):
        MatchCache.key(seed=np.int64(7))


def test_nothing_half_written_is_left_or_read(tmp_path):
    cache = MatchCache(tmp_path)
    key = cache.key(**PARTS)
    cache.put(key, _games())
    with pytest.raises(ValueError, match="refusing to save"):
        cache.put(key, [{"seating": ["a", "b"], "scores": [1.0]}])
    with pytest.raises(TypeError):
        cache.put(key, _games(), metadata={"when": object()})
    assert [p.name for p in tmp_path.iterdir()] == [f"{key}.json"]
    assert cache.get(key) == _games()
    # a writer killed before its rename leaves only a temporary name, never read as an entry
    other = cache.key(**{**PARTS, "seed": 8})
    (tmp_path / f".{other}.json.x1y2.tmp").write_text(json.dumps({"key": other, "games": _games()})[:40])
    assert cache.get(other) is None
