"""An error line of a message of any length is one short line, masked, and comes back at once."""

import pytest

from pipeline.harness.entry import UsageError, entry_point


def error_line(message: str, capsys) -> str:
    def fail(argv):
        raise UsageError(message)

    with pytest.raises(SystemExit) as exit:
        entry_point(fail)([])
    assert exit.value.code == 1
    (line,) = capsys.readouterr().err.splitlines()
    return line


def test_a_100_kb_game_value_is_one_clipped_line(capsys):
    """It took 98 s: the whole message was masked before the clip, by a pattern quadratic on a long word."""
    line = error_line("game: " + repr("tictacmo(" + "x" * 100_000 + ")") + ": unknown game", capsys)
    assert line.startswith("error: game: 'tictacmo(xxx") and line.endswith("...") and len(line) == len("error: ") + 300


def test_a_long_message_keeps_its_password_masked_and_its_reason(capsys):
    line = error_line("storage postgresql://ada@db/x?password=S3cretPW: refused " + "x" * 1_000_000, capsys)
    assert line.startswith("error: storage postgresql://ada@db/x?password=***: refused xxx")
    assert "S3cret" not in line


@pytest.mark.parametrize("long", [3_964, 3_966, 3_967, 3_968])
def test_a_password_where_the_message_is_cut_for_masking_does_not_show(capsys, long):
    """The message is cut at 4,000 characters before masking, here inside the URL's password (which runs
    to its last '@'); the long value before it is masked to `***`, so what follows the cut is on the line."""
    line = error_line(f"password={'y' * long}: postgresql://ada:Zq@7x@db/optuna: refused", capsys)
    assert line.startswith("error: password=***: postgresql://ada:***")
    assert "Zq" not in line and "7x" not in line
