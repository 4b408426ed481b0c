"""Every random stream of a run is named in `pipeline/seeds.py`, and no two draw the same numbers."""

from pathlib import Path

from pipeline import seeds

ROOT = Path(__file__).resolve().parents[1]


def test_no_two_streams_share_their_entropy():
    streams = [
        seeds.selfplay_games(0, 1, 0),
        seeds.gate_games(0, 1),
        seeds.random_openings(0, 1),
        seeds.sweep_panel(0, 0),
        seeds.sweep_versus_baseline(0),
        seeds.play_sweep_games(0, 0, 0),
        seeds.play_confirmation_games(0, 0, 0),
    ]
    assert len({tuple(stream) for stream in streams}) == len(streams)


def test_no_module_writes_a_stream_of_the_params_seed_outside_the_seeds_module():
    bare = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "pipeline").rglob("*.py")
        if path.name != "seeds.py" and "[params.seed," in path.read_text()
    ]
    assert bare == [], "name the stream in pipeline/seeds.py"
