"""Passwords never leave the process: every URL the project logs, prints or writes goes through
`mask_passwords`. Secrets belong in the environment, not in params.yaml (a tracked file whose values
DVC also copies into dvc.lock): `OPTUNA_STORAGE` (the sweep's storage URL, as Optuna's own CLI reads
it), `MLFLOW_TRACKING_URI` (where `tracking.tracking_uri` is null), `PGPASSWORD` or `~/.pgpass` (read
by psycopg for a `postgresql://user@host/db` URL without password), `MLFLOW_TRACKING_USERNAME` and
`MLFLOW_TRACKING_PASSWORD` (an MLflow server).

Masking takes time linear in the text: no pattern here scans again what an earlier attempt scanned
(the scheme pattern did, from every letter of a word: 40,000 characters took seconds, a 100 KB error
line tens of seconds). Schemes and keys start only where a word starts, a quantifier that nothing after it
could give back to is possessive, a look-ahead over a run of spaces starts at the run's first, and an
unclosed quote masks the rest of its line rather than being scanned again from every later key."""

from __future__ import annotations

import re

# scheme://user:password@host, for any scheme (SQLAlchemy's `dialect+driver`, http, redis, ...). Either
# part may hold what drivers accept raw (spaces, ':', '@'; '/' in the password), so the user runs to the
# first ':' (not past a '/': a path is no user) and the password to the last '@' of the line: masking
# too much of a line is safe, too little is not.
_SCHEME_USER = re.compile(r"(?<![\w+.-])[\w+.-]*+://[^:/\n]*+:")
# A password given by key: libpq's `?password=` in a URL and `password=...` in a key-value DSN, ODBC's
# `PWD=...` (braced, `}}` an escaped brace, also percent-encoded), `PGPASSWORD=...` in the environment,
# `password: ...` in YAML, `"password": ...` in JSON or a Python dict. A quoted value ends at its quote
# (an unclosed one at the line's end; a word glued to the quote goes with it, as a shell reads
# `'S3c'ret`). An unquoted one runs on (';', '&' and spaces included, as libpq
# reads them) until the next `key=`: libpq reads `password=S3c ret` as `S3c` and a stray word `ret`,
# which its error message quotes. It also ends at ': ', where the project's error lines give their reason
# after the URL they quote; in a URL's query at the next `&key=` parameter, and after ODBC's `PWD=` at
# ';' (ODBC ends an unbraced value there), so the rest of the line stays readable. A value masked
# already stays `***`, so a masked line can be masked again without losing its words.
_KEY = r"(?<![/.])\b\w*(?:password|passwd|pwd)\b"  # not a file path's last part (`/etc/passwd: ...`)
_ASSIGN = r"\s*+(?:=|%3D|:)\s*+"
_QUOTED = (
    r"'(?:[^'\\\n]|\\.)*+(?:'|[^\n]*+)"
    r"|\"(?:[^\"\\\n]|\\.)*+(?:\"|[^\n]*+)"
    r"|\{(?:[^}\n]|\}\})*+(?:\}|[^\n]*+)"
    r"|%7B(?:(?!%7D)[^\n]|%7D%7D)*+(?:%7D|[^\n]*+)"
)
_MASKED = r"\*\*\*(?=[\s;]|$)"
_NEXT_KEY = r"(?<!\s)\s++[\w%]++\s*+="
_REASON = r":\s"


def _value(stop: str) -> str:
    """A value of a key: quoted, masked already, or unquoted up to `stop` (where its form ends it)."""
    return rf"(?:(?:{_QUOTED})(?:(?!{stop})\S)*+|{_MASKED}|(?:(?!{stop})[^\n])++)"


_ODBC_STOP = f";|%3B|{_REASON}"
_QUERY_STOP = rf"&[\w%]++=|{_NEXT_KEY}|{_REASON}"
_KEY_STOP = f"{_NEXT_KEY}|{_REASON}"
_KEY_PASSWORD = re.compile(
    rf"(?P<odbc>\b\w*pwd\b{_ASSIGN}){_value(_ODBC_STOP)}"
    rf"|(?P<query>(?<=[?&]){_KEY}{_ASSIGN}){_value(_QUERY_STOP)}"
    rf"|(?P<key>{_KEY}{_ASSIGN}){_value(_KEY_STOP)}"
    rf"|(?P<quoted_key>[\"']{_KEY}[\"']\s*+:\s*+)(?:{_QUOTED}|[^,}}\s])[^,}}\s]*+",
    re.IGNORECASE,
)


def mask_passwords(text: str, limit: int | None = None) -> str:
    """`postgresql://user:secret@host/db` -> `postgresql://user:***@host/db`, and the same for every
    form the drivers read: any character in the user or the password, `?password=` (every value of a
    URL's query: `?token=` too), `password='...'`, `PWD=...`, `PGPASSWORD=...`.

    With `limit`, only the first `limit` characters come back, masked as though the text went on: work
    bounded for a message of any length (an error line shows 300 characters). The cut counts as the '@'
    that may end a URL's password beyond it, so no part of a password cut there shows; every other form
    masks to the end of what it finds already."""
    if limit is not None and len(text) > limit:
        return mask_passwords(text[:limit] + "@").removesuffix("@")
    text = _BROKEN_PASSWORD.sub(lambda found: found["user"] + "***@", text)
    text = "\n".join(map(_mask_url, text.split("\n")))
    text = _URL_QUERY.sub(_mask_query, text)
    return _KEY_PASSWORD.sub(lambda found: found[found.lastgroup] + "***", text)


# A URL password with a line break or two in it (a driver quotes it raw): from the user's ':' over the
# breaks to the first '@' after them. A host's port and path (a '/' before the break) are no password.
_BROKEN_PASSWORD = re.compile(r"(?P<user>(?<![\w+.-])[\w+.-]*+://[^:/\n@]*+:)(?:[^@\n/]*+\n){1,2}+[^@\n]*+@")

# A URL's query (up to a space or a quote): every value in it may be a secret (`?token=`, `?key=`,
# `?sig=`), so every value is masked; a ':' that ends the query starts the error line's reason.
_URL_QUERY = re.compile(r"(?<![\w+.-])[\w+.-]*+://[^\s?'\"]*+\?(?P<query>[^\s'\"]*+)")
_QUERY_VALUE = re.compile(r"(?P<key>(?:^|&)[^=&]*+=)(?:(?!:$)[^&])*+")


def _mask_query(found: re.Match) -> str:
    query = _QUERY_VALUE.sub(lambda value: value["key"] + "***", found["query"])
    return found.group(0)[: found.start("query") - found.start()] + query


def _mask_url(line: str) -> str:
    """The password of the line's first `scheme://user:` before its last '@', masked up to that '@'."""
    end = line.rfind("@")
    found = _SCHEME_USER.search(line, 0, end) if end > 0 else None
    return line if found is None else line[: found.end()] + "***" + line[end:]
