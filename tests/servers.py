"""Real servers for the suite, as a team would share them: PostgreSQL in a temporary data directory and
an `mlflow server` backed by it, both on 127.0.0.1 ports of their own, gone after the tests.

Where the binaries are missing the tests skip with the reason; in CI (`CI` set) that is a failure, since
`.ci/run` installs them."""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "alphazero"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def missing(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must install it: .ci/run)")
    pytest.skip(reason)


@dataclass
class Postgres:
    port: int
    password: str

    def url(self, database: str, with_password: bool = False) -> str:
        secret = f":{self.password}" if with_password else ""
        return f"postgresql+psycopg://{USER}{secret}@127.0.0.1:{self.port}/{database}"


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its binaries as the `postgres` user there."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@pytest.fixture(scope="session")
def postgres():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        missing("PostgreSQL is not installed (apt-get install postgresql)")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[postgres]'")
    binaries = Path(found[-1]).parent
    home = Path(tempfile.mkdtemp(prefix="alphazero-pg-"))
    data, password = home / "data", secrets.token_urlsafe(16)
    (home / "password").write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
        shutil.chown(home / "password", "postgres")
    run = lambda command: subprocess.run(_as_postgres(command), check=True, capture_output=True)  # noqa: E731
    run([str(binaries / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={home / 'password'}", "-A", "scram-sha-256"])
    port = free_port()
    options = f"-h 127.0.0.1 -p {port} -k {home}"
    run([str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(home / "log"), "-w", "start"])
    server = Postgres(port, password)
    try:
        env = {**os.environ, "PGPASSWORD": password}
        for database in ("mlflow", "optuna"):
            subprocess.run(
                [str(binaries / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, database],
                env=env, check=True, capture_output=True,
            )  # fmt: skip
        yield server
    finally:
        subprocess.run(_as_postgres([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]))
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def mlflow_server(postgres, tmp_path_factory):
    """`mlflow server` with PostgreSQL as its store (the password from PGPASSWORD, never in a URL) and
    a local folder for artifacts, served through it; its http:// URL."""
    port, artifacts = free_port(), tmp_path_factory.mktemp("mlflow-artifacts")
    command = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--backend-store-uri", postgres.url("mlflow"), "--artifacts-destination", str(artifacts)]
    command += ["--workers", "1"]
    log = tmp_path_factory.mktemp("mlflow-log") / "server.log"
    env = {**os.environ, "PGPASSWORD": postgres.password}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"  # its job runner: processes no test needs
    with open(log, "w") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    raise AssertionError(f"mlflow server did not start:\n{log.read_text()[-3000:]}") from None
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
