"""Outputs appear whole or not at all."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline.plumbing.atomic import (
    WriteError,
    atomic_path,
    remove_leftovers,
    write_bytes,
    write_json,
    write_npz,
    write_text,
)

ROOT = Path(__file__).resolve().parents[1]


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


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_take_the_users_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        write_json(tmp_path / "metrics.json", {"a": 1})
        write_npz(tmp_path / "samples.npz", x=np.zeros(2))
    finally:
        os.umask(old)
    assert {stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()} == {mode}


def test_leftovers_of_killed_writers_are_removed_and_nothing_else(tmp_path):
    write_json(tmp_path / "kept.json", {"a": 1})
    leftovers = [".kept.json.1f3a9c0b.tmp", ".0a1b2c.json.k2_9xz0q.tmp"]  # ours, and tempfile.mkstemp's
    others = [".hidden", "notes.tmp", ".short.tmp", ".kept.json.toolongname.tmp"]
    for name in leftovers + others:
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / leftovers[0]).write_text("x")
    remove_leftovers(tmp_path, tmp_path / "missing")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["kept.json", "sub", *others])
    assert (tmp_path / "sub" / leftovers[0]).exists(), "only the folders named are cleaned"


FULL_DISK = """
import resource, signal, sys
from pipeline.plumbing.atomic import write_npz
from pipeline.harness.entry import entry_point
import numpy as np

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
entry_point(lambda argv: write_npz(argv[0], values=np.random.default_rng(0).random(100_000)))(sys.argv[1:])
"""


def test_a_write_the_system_refuses_is_one_line_naming_the_output_and_leaves_it_as_it_was(tmp_path):
    target = tmp_path / "data" / "gen_1.npz"
    target.parent.mkdir()
    target.write_bytes(b"before")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(target)], env=env, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {target}: cannot be written (File too large)"]
    assert target.read_bytes() == b"before" and [p.name for p in target.parent.iterdir()] == ["gen_1.npz"]


def test_json_outputs_are_standard_json_where_a_figure_is_not_a_number(tmp_path):
    import json

    path = tmp_path / "figures.json"
    write_json(path, {"low": float("nan"), "bounds": [0.5, float("inf")], "games": 1})

    def refuse(constant):
        raise ValueError(f"{constant} is not standard JSON")

    assert json.loads(path.read_text(), parse_constant=refuse) == {"low": None, "bounds": [0.5, None], "games": 1}


WRITERS = {
    "write_json": lambda path: write_json(path, {"a": 1}),
    "write_text": lambda path: write_text(path, "a"),
    "write_bytes": lambda path: write_bytes(path, b"a"),
    "write_npz": lambda path: write_npz(path, x=np.zeros(2)),
}


def named_pipe(folder: Path) -> Path:
    """A FIFO stands in for /dev/null, which no test may touch: a write as root would replace the device."""
    os.mkfifo(folder / "out.json")
    return folder / "out.json"


def folder(parent: Path) -> Path:
    (parent / "out.json").mkdir()
    return parent / "out.json"


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(
    ("make", "kind", "is_kind"), [(named_pipe, "a named pipe", stat.S_ISFIFO), (folder, "a folder", stat.S_ISDIR)]
)
def test_a_target_that_is_no_regular_file_is_refused_and_left_as_it_is(tmp_path, writer, make, kind, is_kind):
    target = make(tmp_path)
    with pytest.raises(WriteError) as refused:
        WRITERS[writer](target)
    assert str(refused.value) == f"{target}: is {kind}; expected a regular file to write, or a new name"
    assert is_kind(target.lstat().st_mode) and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_refused_target_is_refused_before_the_work_and_in_one_line(tmp_path, capsys):
    from pipeline.harness.entry import entry_point

    target = named_pipe(tmp_path)
    worked = []
    with pytest.raises(WriteError):
        with atomic_path(target):
            worked.append(True)
    assert not worked, "the block that writes the output does not run"
    with pytest.raises(SystemExit) as exit:
        entry_point(lambda argv: write_json(argv[0], {"a": 1}))([str(target)])
    assert exit.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: {target}: is a named pipe; expected a regular file to write, or a new name"
    ]


def test_a_symbolic_link_is_followed_its_file_replaced_and_the_link_kept(tmp_path):
    """As for a dotfile linked from a dotfiles repository: the link stays and names the new file."""
    (tmp_path / "dotfiles").mkdir()
    real, link = tmp_path / "dotfiles" / "settings.json", tmp_path / "settings.json"
    real.write_text("before")
    link.symlink_to(real)
    write_json(link, {"a": 2})
    assert link.is_symlink() and link.resolve() == real and '"a": 2' in real.read_text()
    assert [p.name for p in (tmp_path / "dotfiles").iterdir()] == ["settings.json"]
    dangling = tmp_path / "new.json"
    dangling.symlink_to(tmp_path / "dotfiles" / "new.json")
    write_text(dangling, "made")
    assert dangling.is_symlink() and (tmp_path / "dotfiles" / "new.json").read_text() == "made"


def test_a_symbolic_link_to_a_named_pipe_is_refused(tmp_path):
    (tmp_path / "pipes").mkdir()
    pipe = named_pipe(tmp_path / "pipes")
    (tmp_path / "link.json").symlink_to(pipe)
    with pytest.raises(WriteError, match=r"link\.json: is a named pipe; expected a regular file"):
        write_json(tmp_path / "link.json", {"a": 1})
    assert stat.S_ISFIFO(pipe.stat().st_mode) and (tmp_path / "link.json").is_symlink()
