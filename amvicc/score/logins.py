"""Rater logins from ``USER:PASSWORD`` pairs and login files."""

from __future__ import annotations

from pathlib import Path

from amvicc.errors import UserError
from amvicc.score.desk import normalise_rater


def read_logins(pairs: list[str], auth_file: Path | None) -> list[tuple[str, str]]:
    """Logins from ``--auth USER:PASSWORD`` and ``--auth-file`` (``#`` starts a comment).

    Raises:
        UserError: a login is malformed, a user repeats, or the file cannot be read.
    """
    entries = [("--auth", pair) for pair in pairs]
    if auth_file is not None:
        try:
            text = auth_file.read_text(encoding="utf-8")
        except OSError as err:
            raise UserError(f"cannot read --auth-file {auth_file}: {err.strerror}") from None
        entries += [
            (f"{auth_file}:{number}", line.strip())
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ]
    logins: dict[str, str] = {}
    for where, entry in entries:
        user, colon, password = entry.partition(":")
        if not colon or not user.strip() or not password:
            raise UserError(f"{where}: a login is USER:PASSWORD with both parts non-empty")
        try:
            user = normalise_rater(user)
        except UserError as err:
            raise UserError(f"{where}: {err}") from None
        if user in logins:
            raise UserError(f"{where}: user {user!r} is given twice")
        logins[user] = password
    return list(logins.items())
