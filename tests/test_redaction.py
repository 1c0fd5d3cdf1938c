"""Credentials in URLs and options never reach the store, the logs or a report (part 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.redaction import (
    REDACTED,
    is_secret_name,
    redact_bytes,
    redact_command,
    redact_config,
    redact_known_secrets,
    redact_text,
    redact_url,
    remember_secret,
)
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer

# Keys that do not look like OpenAI's: redaction goes by where a value is, not its shape.
KEY = "hunter2-Zq8W1x"
TOKEN = "tok_live_4f2a9c"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True), ("apiKey", True), ("x-api-key", True), ("access_token", True),
        ("client_secret", True), ("password", True), ("key", True), ("Authorization", True),
        ("max_tokens", False), ("keyframes", False), ("config_key", False),
        ("api_key_env", True), ("quality", False),
    ],
)  # fmt: skip
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_urls_lose_user_info_and_key_parameters() -> None:
    assert redact_url(f"http://bob:{KEY}@gpu:8000/v1") == "http://[redacted]@gpu:8000/v1"
    assert redact_url(f"https://h/v1?api_key={TOKEN}&model=x") == (
        "https://h/v1?api_key=[redacted]&model=x"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_commands_and_configurations() -> None:
    command = (
        f"amvicc generate --model flux --base-url http://u:{KEY}@h/v1 --option api_key={TOKEN} "
        f"--option max_tokens=5 --api-key-env MY_KEY --token={TOKEN} --password {KEY}"
    )
    redacted = redact_command(command) or ""
    assert KEY not in redacted and TOKEN not in redacted
    assert "MY_KEY" in redacted and "max_tokens=5" in redacted
    config = redact_config(
        {"endpoint": f"http://u:{KEY}@h/v1", "options": {"api_key": TOKEN, "n": 1}, "a": [KEY]}
    )
    assert KEY not in json.dumps(config["endpoint"]) and TOKEN not in json.dumps(config)
    assert config["options"]["n"] == 1 and config["a"] == [KEY]  # no name, no URL: kept


def test_keys_in_base_url_and_options_reach_no_store_log_or_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with FakeOpenAIServer() as server:
        port = server.url.split(":")[-1].split("/")[0]
        url = f"http://alice:{KEY}@127.0.0.1:{port}/v1"
        workspace = tmp_path / "ws"
        status = main(
            [
                "generate", "--model", "flux", "--base-url", url, "--index", "1",
                "--option", f"api_key={TOKEN}", "--option", f"secret={KEY}",
                "--store", str(workspace), "-v",
            ]
        )  # fmt: skip
        assert status == 0
        sent = [r.body for r in server.requests if r.path == "/v1/images/generations"]
        assert sent and sent[0]["api_key"] == TOKEN  # the request itself uses the real value
    for fmt in ("html", "md", "json"):
        assert main(["report", "--store", str(workspace), "--format", fmt, "-o",
                     str(tmp_path / f"r.{fmt}"), "-q", "--bootstrap", "0"]) == 0  # fmt: skip
    seen = [capsys.readouterr(), caplog.text]
    places = [
        *(p.read_bytes() for p in workspace.rglob("*") if p.is_file()),
        *(p.read_bytes() for p in tmp_path.glob("r.*")),
        json.dumps([s.out + s.err if hasattr(s, "out") else s for s in seen]).encode(),
    ]
    for data in places:
        assert KEY.encode() not in data and TOKEN.encode() not in data
    with Store(workspace) as store:
        (run,) = store.runs()
        assert "[redacted]" in (run.command or "") and "[redacted]" in run.config_json


def test_redaction_of_known_secrets_and_bearer_tokens() -> None:
    """What a server echoes: the key amvicc read (remembered), any Bearer credential."""
    remember_secret("short")  # too short to be a key: common words would vanish
    remember_secret("sk-unit-test-0123456789")
    text = (
        'HTTP 401: {"auth": "Bearer sk-unit-test-0123456789", "other": "Bearer abcdefgh12345678"}'
    )
    redacted = redact_text(text)
    assert "sk-unit-test-0123456789" not in redacted and "abcdefgh12345" not in redacted
    assert "short" in redact_text("a short reply")
    assert redact_text("the flag bearer standing on the left") == (
        "the flag bearer standing on the left"
    )
    assert redact_known_secrets("Bearer abcdefgh12345678 sk-unit-test-0123456789") == (
        "Bearer abcdefgh12345678 [redacted]"
    )
    body = b'{"error": {"message": "key sk-unit-test-0123456789 is invalid \xff"}}'
    assert redact_bytes(body) == b'{"error": {"message": "key [redacted] is invalid \xff"}}'
    assert redact_bytes(b'{"choices": []}') == b'{"choices": []}'


def test_a_key_echoed_encoded_is_redacted_too() -> None:
    """A server may quote the header it got URL-encoded, JSON-escaped or in base64."""
    import base64
    import json
    from urllib.parse import quote, quote_plus

    key = "sk-enc/od+ed=key 0123456789"
    remember_secret(key)
    bearer = base64.b64encode(f"Bearer {key}, Accept: */*".encode()).decode()
    echoes = [
        f"?auth={quote(key, safe='')}&x=1",
        f"header={quote_plus(key)}",
        json.dumps({"got": key}),
        json.dumps({"got": key}).replace("/", "\\/"),
        f"token b64: {base64.b64encode(key.encode()).decode()}",
        f"token b64: {base64.urlsafe_b64encode(key.encode()).decode()}",
        f"raw header b64: {bearer}",
    ]
    for echo in echoes:
        redacted = redact_text(echo)
        assert "[redacted]" in redacted, echo
        # nothing of the key's encoded form longer than its last, partial group survives
        for form in (quote(key, safe=""), base64.b64encode(key.encode()).decode()[:-4]):
            assert form not in redacted
    assert redact_text("an ordinary reply: the bird faces left") == (
        "an ordinary reply: the bird faces left"
    )


@pytest.mark.parametrize("before", [b"", b"x", b"xy", b"Authorization: ", b'{"h": "Bearer '])
@pytest.mark.parametrize("urlsafe", [False, True])
def test_a_key_in_base64_is_redacted_wherever_it_starts_in_a_group(
    before: bytes, urlsafe: bool
) -> None:
    """Base64 of a longer text shows the key differently by where it starts in a 3-byte group."""
    import base64

    key = "sk-shifted/base64+key-0123456789"
    remember_secret(key)
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    blob = encode(before + key.encode() + b'", "x": 1}').decode()
    redacted = redact_text(f"echo: {blob}")
    assert REDACTED in redacted
    # Left of the marker: only characters that hold bits of the text before the key (and at
    # most one group of the key's own); right of it, the rest of the last group and what
    # followed. Decoding either side gives back no run of the key's bytes.
    left, _, right = redacted.removeprefix("echo: ").partition(REDACTED)
    assert len(left) <= 4 * (len(before) // 3) + 3
    assert len(right) <= 4 + len(encode(b'", "x": 1}'))
    for side in (left, right):
        for start in range(4):
            piece = side[start:]
            piece = piece[: len(piece) - len(piece) % 4]
            try:
                decoded = base64.b64decode(piece.replace("-", "+").replace("_", "/"))
            except ValueError:
                continue
            assert b"base64+key" not in decoded and b"0123456789" not in decoded


def test_a_key_json_escaped_character_by_character_is_redacted() -> None:
    key = "sk-every-char-escaped-0123"
    remember_secret(key)
    for digits in ("{:04x}", "{:04X}"):
        escaped = "".join("\\u" + digits.format(ord(c)) for c in key)
        assert redact_text(f'{{"key": "{escaped}"}}') == f'{{"key": "{REDACTED}"}}'
