"""`export` refuses a target that is no regular file in one line, before it loads or exports anything."""

import os
import stat

import pytest

from pipeline.commands import export
from pipeline.nets import onnx_runtime


@pytest.mark.parametrize("through_a_link", [False, True])
def test_export_to_a_named_pipe_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, through_a_link):
    """A FIFO stands in for /dev/null: run as root, the export replaced the device with a regular file."""
    pipe = tmp_path / "out.onnx"
    os.mkfifo(pipe)
    target = pipe
    if through_a_link:
        target = tmp_path / "link.onnx"
        target.symlink_to(pipe)

    def exported(*args):
        raise AssertionError("the export ran before its target was checked")

    monkeypatch.setattr(onnx_runtime, "export_checkpoint", exported)
    with pytest.raises(SystemExit) as exit:
        export.main(["tictacmo", str(target)])
    assert exit.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: {target}: is a named pipe; expected a regular file to write, or a new name"
    ]
    assert stat.S_ISFIFO(pipe.lstat().st_mode)
