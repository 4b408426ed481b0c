"""Passwords never leave the process: every URL the project logs, prints or writes goes through
`mask_passwords`. Secrets belong in the environment, not in params.yaml (a tracked file whose values
DVC also copies into dvc.lock): `OPTUNA_STORAGE` (the sweep's storage URL, as Optuna's own CLI reads
it), `MLFLOW_TRACKING_URI` (where `tracking.tracking_uri` is null), `PGPASSWORD` or `~/.pgpass` (read
by psycopg for a `postgresql://user@host/db` URL without password), `MLFLOW_TRACKING_USERNAME` and
`MLFLOW_TRACKING_PASSWORD` (an MLflow server)."""

from __future__ import annotations

import re

# scheme://user:password@host. A password may hold what drivers accept raw ('/', spaces, '@'), so it
# runs to the last '@' of the line: masking too much of a line is safe, too little is not.
_URL_PASSWORD = re.compile(r"(?P<user>[A-Za-z][\w+.-]*://[^/@:\s]*:)[^\n]*@")
# libpq's `?password=...` in a URL, and `password=...` in a key-value DSN (quoted values may hold spaces).
_KEY_PASSWORD = re.compile(r"(?P<key>\bpassword\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^&\s]+)", re.IGNORECASE)


def mask_passwords(text: str) -> str:
    """`postgresql://user:secret@host/db` -> `postgresql://user:***@host/db`, and the same for every
    form the drivers read: a raw '/', space or '@' in the password, `?password=`, `password='...'`."""
    return _KEY_PASSWORD.sub(r"\g<key>***", _URL_PASSWORD.sub(r"\g<user>***@", text))
