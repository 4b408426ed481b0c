"""Passwords never leave the process: every URL the project logs, prints or writes goes through
`mask_passwords`. Secrets belong in the environment, not in params.yaml (a tracked file whose values
DVC also copies into dvc.lock): `OPTUNA_STORAGE` (the sweep's storage URL, as Optuna's own CLI reads
it), `MLFLOW_TRACKING_URI` (where `tracking.tracking_uri` is null), `PGPASSWORD` or `~/.pgpass` (read
by psycopg for a `postgresql://user@host/db` URL without password), `MLFLOW_TRACKING_USERNAME` and
`MLFLOW_TRACKING_PASSWORD` (an MLflow server)."""

from __future__ import annotations

import re

# scheme://user:password@host: the password runs to the last '@' before the host (URLs percent-encode
# '@' and '/' inside a password).
_PASSWORD = re.compile(r"(?P<user>//[^/@:\s]*:)[^/\s]*@")


def mask_passwords(text: str) -> str:
    """`postgresql://user:secret@host/db` -> `postgresql://user:***@host/db`, in any text."""
    return _PASSWORD.sub(r"\g<user>***@", text)
