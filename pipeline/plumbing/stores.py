"""Is a store there, before any work is done? MLflow finds out only when it first logs: after a
stage has played its games, with a traceback of 200 lines, or, for an HTTP server where nothing
listens, after four minutes of retries. This asks in seconds, without importing MLflow, and answers
in one line that names the store with its password masked."""

from __future__ import annotations

import base64
import importlib.metadata
import logging
import os
import re
import shutil
import socket
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path

from pipeline.plumbing.credentials import mask_passwords

TIMEOUT_S = 5  # per connection attempt: a store that does not answer by then is reported, not waited for
DATABASES = ("postgresql", "mysql", "mssql", "oracle")  # SQLAlchemy URLs (`postgresql+psycopg://...`)
# The schemes MLflow builds a tracking and a registry store for (besides plugins' own): any other fails
# only when the stage first logs, after its games, in an exception that quotes the URI whole.
MLFLOW_SCHEMES = (
    "sqlite",
    "postgresql",
    "mysql",
    "mssql",
    "http",
    "https",
    "file",
    "databricks",
    "databricks-uc",
    "uc",
)
_SCHEME = re.compile(r"([A-Za-z][\w+.-]*):")
_KEY_VALUE_DSN = re.compile(r"\s*\w+\s*=")  # libpq's `host=db user=ada password=...`


class StoreError(ValueError):
    """A store that cannot be reached or refuses us."""


def sqlite_file(uri: str) -> Path | None:
    """The file of a `sqlite:///` store; None for a store of any other kind (or SQLite in memory)."""
    return Path(uri.removeprefix("sqlite:///")) if uri.startswith("sqlite:///") else None


def check_store(uri: str, what: str = "MLflow store") -> None:
    """Raise `StoreError` in one line where the store at `uri` cannot be used: a SQLite file that cannot
    be written, an HTTP server where nothing answers or that refuses the credentials of the environment,
    a database server that cannot be reached or refuses the login, Databricks without a host and token
    for the profile named, a scheme MLflow does not take. Others (a local folder) pass unchecked."""
    try:
        scheme, known = store_scheme(uri), mlflow_schemes()
        if scheme not in known:
            raise StoreError(unknown_scheme(scheme, known))
        if scheme == "sqlite":
            _check_sqlite(uri)
        elif scheme in ("http", "https"):
            _check_http(uri)
        elif scheme in DATABASES:
            _check_database(uri)
        elif scheme.startswith("databricks"):
            _check_databricks(uri)
    except StoreError as err:
        raise StoreError(f"{what} {mask_passwords(uri)}: {err}") from None


def store_scheme(uri: str) -> str:
    """The URI's scheme, without its driver (`postgresql+psycopg` -> `postgresql`); "" for a local path.
    A key-value DSN is no URI that MLflow or SQLAlchemy reads: a `StoreError`, its password masked by
    the caller's line."""
    if _KEY_VALUE_DSN.match(uri):
        raise StoreError("a key-value DSN, not a URL; expected postgresql://USER@HOST/DB (the password in PGPASSWORD)")
    if uri.strip() in ("databricks", "databricks-uc"):  # MLflow's bare form: the default profile
        return uri.strip()
    found = _SCHEME.match(uri)
    if not found or len(found[1]) == 1:  # `C:/mlruns`: a drive letter, a local path as MLflow reads it
        return ""
    return found[1].split("+")[0].lower()


def mlflow_schemes() -> tuple[str, ...]:
    """`MLFLOW_SCHEMES`, "" (a local folder) and those of installed MLflow store plugins."""
    plugins = importlib.metadata.entry_points(group="mlflow.tracking_store")
    return ("", *MLFLOW_SCHEMES, *(plugin.name for plugin in plugins))


def unknown_scheme(scheme: str, known: tuple[str, ...]) -> str:
    """One line naming the schemes a store takes, with the spelling SQLAlchemy 1.4 dropped put right."""
    hint = "; postgres:// is spelt postgresql://" if scheme == "postgres" else ""
    return f"unknown scheme {scheme}://; expected one of {', '.join(s + '://' for s in known if s)}{hint}"


def _check_sqlite(uri: str) -> None:
    path = sqlite_file(uri)
    if path is None or str(path) in ("", ".", ":memory:"):
        return
    if path.exists():
        if not path.is_file() or not os.access(path, os.R_OK | os.W_OK):
            raise StoreError("not a file this user can read and write")
        _check_sqlite_file(path)
    elif not path.parent.is_dir():
        raise StoreError(f"folder {path.parent} does not exist")
    elif not os.access(path.parent, os.W_OK):
        raise StoreError(f"folder {path.parent} is not writable")
    if shutil.disk_usage(path.parent).free < MIN_FREE_BYTES:
        raise StoreError(f"the disk under {path.parent} is full")


MIN_FREE_BYTES = 16 * 2**20  # a stage's runs, metrics and a checkpoint or two


def _check_sqlite_file(path: Path) -> None:
    """A damaged or truncated database is one line here, not SQLAlchemy's hundreds of lines later. Opened
    for writing, as MLflow opens it: a writer killed mid-transaction leaves a hot journal that only a
    writable connection may roll back (read-only, SQLite answers "attempt to write a readonly database")."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=60)) as database:
            verdict = database.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.Error as err:
        raise StoreError(f"not a readable SQLite database ({err})") from None
    if verdict != "ok":
        raise StoreError(f"a damaged SQLite database ({verdict})")


def _check_http(uri: str) -> None:
    parts = urllib.parse.urlsplit(uri)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname, port), timeout=TIMEOUT_S).close()
    except OSError as err:
        raise StoreError(f"nothing answers at {parts.hostname}:{port} ({err.strerror or err})") from None
    # urllib.request reads a URL's `user:password@` as part of the host name: ask without it
    base = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])).rstrip("/")
    query = urllib.parse.urlencode({"experiment_name": "Default"})
    headers, whose = _auth_headers(parts)
    request = urllib.request.Request(f"{base}/api/2.0/mlflow/experiments/get-by-name?{query}", headers=headers)
    try:
        urllib.request.urlopen(request, timeout=TIMEOUT_S).close()
    except urllib.error.HTTPError as err:
        if err.code in (401, 403):
            raise StoreError(f"refuses the credentials of {whose} (HTTP {err.code} {err.reason})") from None
        if err.code != 404:  # 404: no experiment of that name, which is an answer of an MLflow server
            raise StoreError(f"answers HTTP {err.code}, not as an MLflow server") from None
    except (urllib.error.URLError, OSError) as err:
        raise StoreError(f"no answer ({getattr(err, 'reason', err)})") from None


def _auth_headers(parts: urllib.parse.SplitResult) -> tuple[dict[str, str], str]:
    """The credentials MLflow sends, and where they come from: the URL's `user:password@` (which the
    requests library sends in place of any other), else MLflow's own variables, a bearer token or a user
    and password for basic authentication."""
    if parts.username is not None:
        user, password = urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")
        return {"Authorization": _basic(user, password)}, "the URL"
    if token := os.environ.get("MLFLOW_TRACKING_TOKEN"):
        return {"Authorization": f"Bearer {token}"}, "the environment"
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password:
        return {"Authorization": _basic(user, password)}, "the environment"
    return {}, "the environment"


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _check_database(uri: str) -> None:
    import sqlalchemy

    connect_args = {"connect_timeout": TIMEOUT_S} if uri.startswith("postgresql") else {}
    try:
        engine = sqlalchemy.create_engine(uri, connect_args=connect_args)
    except Exception as err:  # no driver installed, a malformed URL
        raise StoreError(_first_line(err)) from None
    try:
        with engine.connect():
            pass
    except Exception as err:  # the driver's own errors: refused login, no such host or database
        raise StoreError(_first_line(getattr(err, "orig", None) or err)) from None
    finally:
        engine.dispose()


def _check_databricks(uri: str) -> None:
    """The host and token of the Databricks profile the URI names, read as MLflow reads them. MLflow's own
    error quotes the URI whole, its password and all, and again in the command it suggests: only its kind
    is kept."""
    from mlflow.utils.databricks_utils import get_databricks_host_creds

    quiet = logging.getLogger("mlflow.utils.databricks_utils")
    level, quiet.level = quiet.level, logging.ERROR  # its warning of the SDK's fallback is a second line
    try:
        get_databricks_host_creds(uri)
    except Exception as err:
        raise StoreError(
            f"no Databricks host and token for the profile it names ({type(err).__name__}); see `databricks configure`"
        ) from None
    finally:
        quiet.setLevel(level)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
