"""Credentials never reach the workspace, the logs or a report: they are redacted.

A key can reach amvicc inside a URL (``http://user:KEY@host/v1``, ``...?api_key=KEY``) or as an
option (``--option api_key=KEY``). Whatever stores, logs or shows a command or a configuration
passes it through :func:`redact_command` or :func:`redact_config` first: URL user info and the
values of parameters named like keys, tokens or secrets (:func:`is_secret_name`) become
``[redacted]``. Requests themselves use the real values.

A server can also send a key back: an error body (401, 500) that repeats the request's
``Authorization`` header. Every key amvicc reads from the environment is remembered
(:func:`remember_secret`), and :func:`redact_text` / :func:`redact_bytes` replace it, and any
``Bearer``/``Basic`` credential, wherever it appears: in error messages, stored bodies and
printed lines. A server may echo the key encoded: URL-quoted, JSON-escaped (a character or
every character) or in base64 (of the key, or of the whole ``Bearer`` header, wherever it
starts in a longer text), so those forms are remembered with it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

REDACTED = "[redacted]"
# Name parts that say a value is a credential: api_key, x-api-key, access_token, apiKey,
# client_secret, password. Plurals are not (max_tokens is a length, not a token).
_SECRET_PARTS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "signature",
        "sig",
        "bearer",
        "cookie",
        "session",
    }
)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+")
# An HTTP credential as a header carries it: "Bearer <token>", "Basic <base64>" (a token of at
# least 16 characters with a digit, so that "the flag bearer standing" stays as it is).
_CREDENTIAL_TEXT = re.compile(
    r"(?i)\b(bearer|basic)(\s+)(?=[A-Za-z._~+/=-]*[0-9])[A-Za-z0-9._~+/=-]{16,}"
)
# Shorter values are not worth hiding at the cost of redacting ordinary words ("EMPTY").
MIN_SECRET_LENGTH = 8
_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()


# "<word>_key" names that identify something rather than unlock it (amvicc's config_key).
_ID_KEYS = frozenset(
    {
        "config",
        "judge",
        "image",
        "cache",
        "sort",
        "prompt",
        "primary",
        "foreign",
        "group",
        "row",
        "dict",
        "map",
        "lookup",
        "hash",
        "partition",
        "storage",
        "slot",
        "item",
        "entry",
    }
)


def is_secret_name(name: str) -> bool:
    """Whether an option or parameter name says its value is a credential.

    ``api_key``, ``apiKey``, ``x-api-key``, ``access_token``, ``client_secret`` and
    ``password`` are; ``max_tokens``, ``keyframes`` and ``config_key`` are not.
    """
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if p]
    for position, part in enumerate(parts):
        if part not in _SECRET_PARTS:
            continue
        if part == "key" and position > 0 and parts[position - 1] in _ID_KEYS:
            continue
        return True
    return False


def redact_url(url: str) -> str:
    """A URL without credentials: user info and key/token query values become ``[redacted]``.

    ``http://user:pw@host/v1?api_key=x&n=1`` -> ``http://[redacted]@host/v1?api_key=[redacted]&n=1``.
    Text that is not a URL is returned unchanged.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(name) for name, _ in pairs):
            query = "&".join(
                f"{quote(name, safe='')}="
                + (REDACTED if is_secret_name(name) else quote(value, safe=""))
                for name, value in pairs
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def remember_secret(value: str | None) -> None:
    """Redact ``value`` wherever it appears from now on (a key read from the environment).

    Values shorter than :data:`MIN_SECRET_LENGTH` characters are not remembered: no real key
    is that short, and hiding them would hide ordinary words.
    """
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _SECRETS_LOCK:
            _SECRETS.update(form for form in _echoed_forms(value) if len(form) >= MIN_SECRET_LENGTH)


def _echoed_forms(value: str) -> set[str]:
    r"""The forms a server may echo a key in: as sent, URL-quoted, JSON-escaped, base64.

    JSON may escape every character (``\u0073\u006b...``). Base64 of a text holding the key
    (or ``Bearer <key>``) shows it as one of three runs of characters, by where the key
    starts in the text's 3-byte groups: each run is remembered, from the first character made
    of the key's bytes alone to the last whole group.
    """
    escaped = json.dumps(value)[1:-1]
    forms = {value, quote(value, safe=""), quote_plus(value), escaped, escaped.replace("/", "\\/")}
    for hex_digits in ("{:04x}", "{:04X}"):
        forms.add("".join("\\u" + hex_digits.format(ord(c)) for c in value))
    for text in (value, f"Bearer {value}"):
        for shift in range(3):
            data = bytes(shift) + text.encode()  # the key after ``shift`` bytes of a group
            whole = data[: len(data) - len(data) % 3]
            # a character is the key's alone from the first one after the shifted bytes' bits
            first = 0 if shift == 0 else shift + 1
            forms.add(base64.b64encode(whole).decode()[first:])
            forms.add(base64.urlsafe_b64encode(whole).decode()[first:])
    return forms


def remember_environment_secrets() -> None:
    """Remember the value of every credential-named environment variable (``*_API_KEY``, ...).

    For what is published whole (a dataset export): a key the user holds but amvicc never
    read could still be quoted in a stored reply or command.
    """
    for name, value in os.environ.items():
        if is_secret_name(name):
            remember_secret(value)


def _known_secrets() -> list[str]:
    with _SECRETS_LOCK:
        return sorted(_SECRETS, key=len, reverse=True)  # a longer key first, whole


def redact_known_secrets(text: str) -> str:
    """A text with every remembered secret (:func:`remember_secret`) replaced, nothing else.

    For what a model wrote: its reply is graded as written, so only a key is taken out.
    """
    for secret in _known_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def redact_text(text: str) -> str:
    """A text without credentials, each replaced by ``[redacted]``.

    Remembered secrets (:func:`remember_secret`), ``Bearer``/``Basic`` credentials and the
    credentials of every URL in it (:func:`redact_url`).
    """
    text = redact_known_secrets(text)
    text = _CREDENTIAL_TEXT.sub(lambda match: f"{match.group(1)}{match.group(2)}{REDACTED}", text)
    return _URL.sub(lambda match: redact_url(match.group(0)), text)


def redact_bytes(data: bytes) -> bytes:
    """A body (an API's JSON, an error page) redacted as :func:`redact_text` redacts text.

    Bytes that are not UTF-8 pass through unchanged around what is redacted; a body holding
    no credential comes back as the same bytes.
    """
    text = data.decode("utf-8", "surrogateescape")
    redacted = redact_text(text)
    if redacted == text:
        return data
    return redacted.encode("utf-8", "surrogateescape")


def redact_config(value: Any) -> Any:
    """A configuration with credentials replaced by ``[redacted]``, recursively.

    Mapping entries whose key names a credential (:func:`is_secret_name`) are redacted
    whatever their value (except ``None`` and names of environment variables, ``*_env``);
    URLs in strings lose their user info and key/token query values.
    """
    if isinstance(value, Mapping):
        return {
            key: (
                REDACTED
                if isinstance(key, str)
                and is_secret_name(key)
                and not key.lower().endswith("_env")
                and item is not None
                else redact_config(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_config(item) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def redact_command(command: str | None) -> str | None:
    """A command line with its credentials redacted, as it may be stored or shown.

    URLs lose their user info and key/token query values; the value of ``--option
    api_key=...`` style pairs, and of ``--api-key VALUE`` / ``--token=VALUE`` flags, becomes
    ``[redacted]``. The names of environment variables (``--api-key-env MY_KEY``) stay.
    """
    if command is None:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return redact_text(command)
    out: list[str] = []
    hide_next = False
    for word in words:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        if word.startswith("-") and not word.startswith("---"):
            flag, equals, value = word.partition("=")
            secret_flag = is_secret_name(flag) and not flag.lower().endswith("-env")
            if secret_flag and equals:
                out.append(f"{flag}={REDACTED}")
                continue
            if secret_flag:
                out.append(word)
                hide_next = True
                continue
            if equals:
                out.append(f"{flag}={redact_word(value)}")
                continue
            out.append(word)
            continue
        out.append(redact_word(word))
    return shlex.join(out)


def redact_word(word: str) -> str:
    """One command-line word: a ``KEY=VALUE`` with a secret key, or a URL, redacted."""
    name, equals, _ = word.partition("=")
    if equals and "://" not in name and is_secret_name(name) and not name.lower().endswith("_env"):
        return f"{name}={REDACTED}"
    return redact_text(word)
