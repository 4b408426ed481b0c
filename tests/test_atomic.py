"""Outputs appear whole or not at all."""

import pytest

from pipeline.atomic import atomic_path, write_json


def test_interrupted_write_leaves_nothing(tmp_path):
    target = tmp_path / "out" / "result.json"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert not target.exists()
    assert list(target.parent.iterdir()) == []


def test_write_replaces_the_old_file_whole(tmp_path):
    target = tmp_path / "result.json"
    write_json(target, {"a": 1})
    write_json(target, {"a": 2})
    assert target.read_text().strip().endswith("}") and '"a": 2' in target.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]
