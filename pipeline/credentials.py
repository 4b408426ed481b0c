"""Passwords never leave the process: every URL the project logs, prints or writes goes through
`mask_passwords`. Secrets belong in the environment, not in params.yaml (a tracked file whose values
DVC also copies into dvc.lock): `OPTUNA_STORAGE` (the sweep's storage URL, as Optuna's own CLI reads
it), `MLFLOW_TRACKING_URI` (where `tracking.tracking_uri` is null), `PGPASSWORD` or `~/.pgpass` (read
by psycopg for a `postgresql://user@host/db` URL without password), `MLFLOW_TRACKING_USERNAME` and
`MLFLOW_TRACKING_PASSWORD` (an MLflow server)."""

from __future__ import annotations

import re

# scheme://user:password@host, for any scheme (SQLAlchemy's `dialect+driver`, http, redis, ...). Either
# part may hold what drivers accept raw (spaces, ':', '@'; '/' in the password), so the user runs to the
# first ':' (not past a '/': a path is no user) and the password to the last '@' of the line: masking
# too much of a line is safe, too little is not.
_URL_PASSWORD = re.compile(r"(?P<user>[A-Za-z][\w+.-]*://[^:/\n]*:)[^\n]*@")
# A password given by key: libpq's `?password=` in a URL and `password=...` in a key-value DSN, ODBC's
# `PWD=...` (braced, `}}` an escaped brace), `PGPASSWORD=...` in the environment, `password: ...` in YAML,
# `"password": ...` in JSON or a Python dict. A quoted value ends at its quote; an unquoted one runs on
# (';', '&' and spaces included, as libpq and ODBC read them) until the next `key=` or the line's end:
# libpq reads `password=S3c ret` as `S3c` and a stray word `ret`, which its error message quotes. A
# value masked already stays `***`, so a masked line can be masked again without losing its words.
_KEY = r"\b\w*(?:password|passwd|pwd)\b"
_QUOTED = r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|\{(?:[^}\n]|\}\})*\}"
_KEY_PASSWORD = re.compile(
    rf"(?P<key>{_KEY}\s*(?:=|%3D|:)\s*)(?:{_QUOTED}|\*\*\*(?=[\s;]|$)|(?:(?!\s+[\w%]+\s*=)[^\n])+)"
    rf"|(?P<quoted_key>[\"']{_KEY}[\"']\s*:\s*)(?:{_QUOTED}|[^,}}\s]+)",
    re.IGNORECASE,
)


def mask_passwords(text: str) -> str:
    """`postgresql://user:secret@host/db` -> `postgresql://user:***@host/db`, and the same for every
    form the drivers read: any character in the user or the password, `?password=`, `password='...'`,
    `PWD=...`, `PGPASSWORD=...`."""
    text = _URL_PASSWORD.sub(r"\g<user>***@", text)
    return _KEY_PASSWORD.sub(lambda found: (found["key"] or found["quoted_key"]) + "***", text)
