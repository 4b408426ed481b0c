"""Every form of a password the database drivers, MLflow and Optuna accept is masked in what the project
prints or logs."""

import os
import subprocess
import sys

import pytest
import yaml
from shipped import ROOT, shipped_params

from pipeline.plumbing.credentials import mask_passwords

# (text holding a password, the password): URLs of every scheme the stores take, with any character in
# the user or the password, key-value DSNs, ODBC strings, environment lines, dicts.
SECRET_FORMS = [
    ("postgresql+psycopg://ada:Zq7x@127.0.0.1:5432/optuna", "Zq7x"),
    ("host=db user=ada password=Zq;7x dbname=x", "7x"),  # libpq keeps ';' in an unquoted value
    ("host=db password=Zq&7x", "7x"),
    ("postgresql://ada@db/x?password=Zq;7x", "7x"),
    ("DRIVER=x;PWD={Zq}}7x;d};UID=u", "7x;d"),  # ODBC's braces, '}}' an escaped brace
    ("password: Zq7x", "Zq7x"),  # YAML
    ('{"password": 90817, "user": "ada"}', "90817"),  # JSON, a number
    ("postgresql+psycopg2://ada:Zq7x@db/optuna", "Zq7x"),
    ("postgres://u:Zq7x@127.0.0.1:1/db", "Zq7x"),
    ("postgresql://ada:Zq/7x@db/optuna", "Zq/7x"),  # a raw '/'
    ("error: MLflow store postgresql://ada:Zq 7x@db/mlflow: refuses the login", "Zq 7x"),  # a space
    ("postgresql://my user:Zq7x@127.0.0.1:1/db", "Zq7x"),  # a space in the user
    ("postgresql://a@b:Zq7x@db/optuna", "Zq7x"),  # a raw '@' in the user
    ("postgresql://ada:Zq@7x@db/optuna", "Zq@7x"),  # a raw '@' in the password
    ("postgresql://ada:Zq:7x@db/optuna", "Zq:7x"),  # a ':' in the password
    ("postgresql://:Zq7x@db/optuna", "Zq7x"),  # no user
    ("mysql://ada:Zq%40x7@db/optuna", "Zq%40x7"),  # percent-encoded
    ("mysql+pymysql://ada:Zq7x@db/optuna", "Zq7x"),
    ("mssql+pyodbc://ada:Zq7x@dsn_name", "Zq7x"),
    ("oracle+oracledb://ada:Zq7x@db:1521/?service_name=x", "Zq7x"),
    ("http://ada:Zq7x@127.0.0.1:5000", "Zq7x"),
    ("https://ada:Zq7x@mlflow.example.org/", "Zq7x"),
    ("databricks://ada:Zq7x@workspace", "Zq7x"),
    ("postgresql://ada@db/optuna?sslmode=require&password=Zq7x", "Zq7x"),  # libpq's query parameter
    ("postgresql:///optuna?host=/run/postgresql&password=Zq7x", "Zq7x"),
    ("host=db user=ada password=Zq7x dbname=optuna", "Zq7x"),  # a key-value DSN
    ("host=db user=ada password = 'Zq 7x' dbname=optuna", "Zq 7x"),
    ("host=db user=ada password=Zq7x MORE", "Zq7x MORE"),  # unquoted: libpq's error quotes 'MORE'
    ("host=db password=Zq7x MORE dbname=optuna", "Zq7x MORE"),
    ("mssql+pyodbc:///?odbc_connect=DRIVER={ODBC};SERVER=db;UID=ada;PWD={Zq;7x};", "Zq;7x"),
    ("mssql+pyodbc:///?odbc_connect=DRIVER%3D%7BODBC%7D%3BUID%3Dada%3BPWD%3DZq7x", "Zq7x"),
    ("PGPASSWORD=Zq7x python -m pipeline sweep", "Zq7x"),
    ("MLFLOW_TRACKING_PASSWORD='Zq 7x'", "Zq 7x"),
    ("connect_args: {'password': 'Zq 7x', 'host': 'db'}", "Zq 7x"),
    ('{"user": "ada", "password": "Zq 7x"}', "Zq 7x"),
    ("databricks://alice:S3cretPW@127.0.0.1", "S3cretPW"),  # any scheme, as RFC 3986 spells one
    ("rediss://alice:Zq7x@cache:6380/0", "Zq7x"),
    ("x-store.v2+grpc://alice:Zq7x@host", "Zq7x"),
    ("DRIVER=x;UID=u;PWD=Zq 7x;SERVER=db", "Zq 7x"),  # ODBC, unbraced: up to the ';'
    ("odbc_connect=DRIVER%3Dx%3BPWD%3D%7BZq%3B7x%7D%3BUID%3Du", "Zq%3B7x"),  # braced, percent-encoded
    ("PWD%3D%7BZq%7D%7D%3B7x%7D%3BUID%3Du", "7x"),  # an encoded '}}' inside
    ("host=db password='Zq'7x dbname=x", "7x"),  # a word glued to the quote
    ("password:\n  Zq7x\n", "Zq7x"),  # YAML, the value on the next line
    ("error: store postgresql://ada:Zq\n7x@127.0.0.1/db: refused", "Zq\n7x"),  # a line break in it
    ("postgresql://127.0.0.1:1/db?token=S3cretTOKEN", "S3cretTOKEN"),  # any value of a URL's query
    ("https://store.example.org/runs?sig=Zq7x&se=2027: refused", "Zq7x"),
]


def secret_pieces(secret: str) -> list[str]:
    """The password and each word of it: none may be printed, not even the part after a space."""
    return [secret, *secret.split()]


@pytest.mark.parametrize(("text", "secret"), SECRET_FORMS)
def test_a_password_in_any_form_the_stores_read_is_masked(text, secret):
    masked = mask_passwords(text)
    assert "***" in masked
    for piece in secret_pieces(secret):
        assert piece not in masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (
            "storage postgresql://ada@db/x?password=S3cretPW: could not connect to server",
            "storage postgresql://ada@db/x?password=***: could not connect to server",
        ),
        (
            "storage postgresql://ada@db/x?password=S3cretPW&sslmode=require: refused",
            "storage postgresql://ada@db/x?password=***&sslmode=***: refused",
        ),
        (
            "storage mssql+pyodbc:///?odbc_connect=DRIVER={ODBC};UID=ada;PWD=S3cretPW;SERVER=db: login failed",
            "storage mssql+pyodbc:///?odbc_connect=***: login failed",
        ),
        (
            "storage mssql+pyodbc:///?odbc_connect=UID%3Dada%3BPWD%3DS3cretPW%3BSERVER%3Ddb: login failed",
            "storage mssql+pyodbc:///?odbc_connect=***: login failed",
        ),
        ("storage host=db password=Zq7x MORE: refused", "storage host=db password=***: refused"),
        ("MLFLOW_TRACKING_PASSWORD='Zq 7x' python -m pipeline", "MLFLOW_TRACKING_PASSWORD=*** python -m pipeline"),
        (
            "error: store databricks://alice:S3cretPW@127.0.0.1: refused",
            "error: store databricks://alice:***@127.0.0.1: refused",
        ),
    ],
)
def test_a_masked_line_keeps_its_reason(text, masked):
    """A value ends where its form ends it, and at the ': ' before the reason of the project's error lines."""
    assert mask_passwords(text) == masked
    assert mask_passwords(masked) == masked, "a line masked already keeps its words"


@pytest.mark.parametrize(("text", "secret"), SECRET_FORMS)
def test_masking_a_masked_text_changes_nothing(text, secret):
    """The stores' errors quote URLs masked already: the entry point masks the whole line again."""
    line = f"storage {mask_passwords(text)}: refused"
    assert mask_passwords(line) == line


@pytest.mark.parametrize(("text", "secret"), SECRET_FORMS)
def test_a_cut_anywhere_in_a_password_shows_no_part_of_it(text, secret):
    """`limit` cuts the text before masking it (an error line is bounded work); a cut inside a URL's
    password, before the '@' that ends it, must not leave the part before the cut showing."""
    elsewhere = text.replace(secret, "\0")  # the text's other characters may repeat a pair of the password's
    pieces = {secret[i : i + 2] for i in range(len(secret) - 1)} - {"**"}
    pieces = {piece for piece in pieces if piece not in elsewhere}
    for cut in range(len(text) + 1):
        masked = mask_passwords(text, limit=cut)
        for piece in pieces:
            assert piece not in masked, (cut, masked)


def test_a_word_of_a_million_characters_and_a_line_of_100_kb_are_masked():
    """Masking is linear: these took hours and 30 s (a scheme tried at every letter of a word); no time is
    asserted here, the results are."""
    word = "a" * 1_000_000
    assert mask_passwords(word) == word
    assert mask_passwords("postgresql://ada:Zq7x@db/" + word) == "postgresql://ada:***@db/" + word
    spaces = "password=Zq7x" + " " * 1_000_000 + "MORE"
    assert mask_passwords(spaces) == "password=***"
    game = "game: " + repr("tictacmo(" + "x" * 100_000 + ")") + ": unknown game"
    assert mask_passwords(game) == game
    keys = "PWD={Zq;" * 12_500 + ": refused"  # every brace left open: the rest of the line is masked
    assert mask_passwords(keys) == "PWD=***"
    line = "storage postgresql://ada@db/x?password=Zq7x: " + "refused " * 12_500
    assert mask_passwords(line) == "storage postgresql://ada@db/x?password=***: " + "refused " * 12_500


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://ada@db/optuna",
        "postgresql://ada@db:5432/optuna",
        "http://127.0.0.1:5000/api",
        "sqlite:///mlflow.db",
        "host=db user=ada dbname=optuna",
        "password_file=/etc/pw",
        "error: ../../etc/passwd: not a checkpoint",  # a file's name, and the reason after it
        "see http://127.0.0.1:5000/api\nand write to ada@example.org",  # a port and a path, then an address
    ],
)
def test_text_without_a_password_is_left_as_it_is(text):
    assert mask_passwords(text) == text


@pytest.mark.parametrize(
    ("argv", "secret"),
    [
        (["compare", "--tracking-uri", "postgres://u:Zq7x@127.0.0.1:1/db"], "Zq7x"),  # MLflow takes no postgres://
        (["compare", "--tracking-uri", "postgresql://my user:Zq7x@127.0.0.1:1/db"], "Zq7x"),
        (["compare", "--tracking-uri", "host=127.0.0.1 port=1 password=Zq7x MORE"], "Zq7x MORE"),  # no scheme
        (["compare", "--tracking-uri", "mysql+pymysql://a@b:Zq 7x@127.0.0.1:1/db"], "Zq 7x"),
        (["compare", "--tracking-uri", "databricks://alice:Zq7x@127.0.0.1"], "Zq7x"),  # MLflow quotes it twice
        (["compare", "--tracking-uri", "databricks-uc://alice:Zq7x@127.0.0.1"], "Zq7x"),
        (["sweep", "--storage", "postgresql://u:Zq7x@127.0.0.1:xx/db"], "Zq7x"),  # a port that is no number
        (["sweep", "--storage", "postgresql://my user:Zq@7x@127.0.0.1:1/db"], "Zq@7x"),
        (["sweep", "--storage", "host=127.0.0.1 port=1 password=Zq7x MORE"], "Zq7x MORE"),
    ],
)
def test_a_store_the_command_cannot_use_is_one_line_without_its_password(argv, secret, tmp_path):
    """The real command line, in a folder of its own: MLflow's and SQLAlchemy's own errors quote the URL."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(shipped_params()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "***" in done.stderr
    for piece in secret_pieces(secret):
        assert piece not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "--storage", "postgresql://u@127.0.0.1:1/db?password=Zq7x"],
        ["compare", "--tracking-uri", "postgresql://u@127.0.0.1:1/db?password=Zq7x"],
    ],
)
def test_a_store_error_line_gives_its_reason_after_the_masked_password(argv, tmp_path):
    """The line ended at `***`: the store's URL comes masked already, and masking the line again ran the
    `?password=` value on to the line's end."""
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(shipped_params()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.split("postgresql://u@127.0.0.1:1/db?password=***: ", 1)[1].strip(), "a reason follows"
    assert "Zq7x" not in done.stdout + done.stderr


def test_no_file_name_carries_a_value_of_the_storage_urls_query(tmp_path):
    """The workers' lock beside a SQLite file is named after the file, not after the URL's query."""
    from pipeline.sweeps.storage import storage_lock

    lock = storage_lock(f"sqlite:///{tmp_path / 'q.db'}?password=Zq7x")
    with lock:
        assert [path.name for path in tmp_path.iterdir()] == ["q.db.workers.lock"]
