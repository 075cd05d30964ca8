"""The one redaction of a server's own secret values (`output/redact.py`), and which values it gets."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from mcp_sidecar.config.interpolate import resolve
from mcp_sidecar.config.validate import parse_server
from mcp_sidecar.output.redact import LOG_MIN_CHARS, REDACTED, Redactor, redaction_note

SECRET = 'Zq8"k/+x'
"""Exactly 8 characters, and different in every encoded form."""
LONG = "sk-live_5b0e17d2/Ünï+cødé=%&"


def b64(text: str, urlsafe: bool = False) -> str:
    raw = text.encode("utf-8")
    return (base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)).decode("ascii")


ENCODED: list[Callable[[str], str]] = [
    lambda s: s,
    quote,
    lambda s: quote(s, safe=""),
    lambda s: quote_plus(s, safe=""),
    lambda s: json.dumps(s)[1:-1],
    b64,
    lambda s: b64(s).rstrip("="),
    lambda s: b64(s, urlsafe=True),
    lambda s: b64(s, urlsafe=True).rstrip("="),
]


@pytest.mark.parametrize("secret", [SECRET, LONG])
@pytest.mark.parametrize("form", range(len(ENCODED)))
@pytest.mark.parametrize("padding", [0, 5_000])
def test_every_form_is_replaced_in_short_and_long_text(secret: str, form: int, padding: int) -> None:
    redactor = Redactor(secrets=[secret])
    shown = ENCODED[form](secret)
    text = "a" * padding + f"before {shown} after"
    out, count = redactor.text(text)
    assert out == "a" * padding + f"before {REDACTED} after"
    assert count == 1


def test_values_under_eight_characters_are_left_in_results_but_not_in_the_log() -> None:
    text = "the word 1234567 stays"
    assert Redactor(secrets=["1234567"]).text(text) == (text, 0)
    assert not Redactor(secrets=["1234567"])
    assert Redactor(LOG_MIN_CHARS, ["1234567"]).text(text) == (f"the word {REDACTED} stays", 1)


def test_text_without_a_secret_is_the_same_object() -> None:
    redactor = Redactor(secrets=[LONG])
    text = "nothing to see\nhere " * 100
    assert redactor.text(text)[0] is text


def test_overlapping_adjacent_and_repeated_values_are_counted_once_per_replacement() -> None:
    redactor = Redactor(secrets=["abcdef12", "ef123456", "zzzzzzzz"])
    out, count = redactor.text("x abcdef123456 y zzzzzzzzzzzzzzzz z abcdef12")
    assert out == f"x {REDACTED} y {REDACTED} z {REDACTED}"
    assert count == 3


def test_a_multi_line_value_is_found_whole_and_line_by_line() -> None:
    key = "-----BEGIN TEST KEY-----\nMIIBVQIBADANBgkqhkiG9w0B\nAQEFAASCAT8wggE7AgEAAkEA\n-----END TEST KEY-----"
    redactor = Redactor(secrets=[key])
    assert redactor.text(f"key: {key}!") == (f"key: {REDACTED}!", 1)
    out, count = redactor.text("line MIIBVQIBADANBgkqhkiG9w0B and AQEFAASCAT8wggE7AgEAAkEA")
    assert (out, count) == (f"line {REDACTED} and {REDACTED}", 2)
    assert redactor.text(json.dumps({"k": key}))[0] == json.dumps({"k": REDACTED})


def test_a_value_split_by_a_hidden_character_comes_back_sanitised_and_redacted() -> None:
    """Sanitising for a person or a model would join it again: the sanitised text goes instead."""
    redactor = Redactor(secrets=[LONG])
    split = f"\x1b[31mkey\x1b[0m {LONG[:6]}\u200b{LONG[6:]} end"
    assert redactor.text(split) == (f"key {REDACTED} end", 1)
    harmless = "\x1b[31mred\x1b[0m text"
    assert redactor.text(harmless)[0] is harmless  # nothing hidden there: kept as sent


def test_json_values_are_walked_keys_included_and_unchanged_parts_kept() -> None:
    redactor = Redactor(secrets=[SECRET, LONG])
    clean = {"type": "text", "text": "fine"}
    result: dict[str, Any] = {
        "content": [clean, {"type": "text", "text": f"token {SECRET}"}],
        "structuredContent": {LONG: [1, f"{quote(LONG)}", {"deep": [json.dumps(SECRET)]}], "n": 3},
        "isError": False,
    }
    out, count = redactor.value(result)
    assert count == 4
    assert out["content"][0] is clean
    assert out["content"][1] == {"type": "text", "text": f"token {REDACTED}"}
    assert out["structuredContent"] == {REDACTED: [1, REDACTED, {"deep": [f'"{REDACTED}"']}], "n": 3}
    assert result["content"][1]["text"] == f"token {SECRET}"  # the server's answer is not modified
    untouched = {"content": [clean], "isError": False}
    assert redactor.value(untouched) == (untouched, 0)
    assert redactor.value(untouched)[0] is untouched


def test_no_secret_means_no_work() -> None:
    result = {"content": [{"type": "text", "text": SECRET}]}
    assert Redactor().value(result)[0] is result


def test_values_added_mid_connection_are_found_from_then_on() -> None:
    redactor = Redactor(secrets=[SECRET])
    forms = redactor.forms
    redactor.add([SECRET, "short"])
    assert redactor.forms is forms  # nothing new: nothing rebuilt
    redactor.add(["refreshed-token-2"])
    assert redactor.text('old Zq8"k/+x new refreshed-token-2') == (f"old {REDACTED} new {REDACTED}", 2)
    redactor.replace(["another-attempt"])
    assert redactor.text(SECRET) == (SECRET, 0)


def test_the_note_says_how_many() -> None:
    assert redaction_note(0) == ""
    assert redaction_note(1) == "(the sidecar replaced 1 of this server's secret value with ***)"
    assert redaction_note(3) == "(the sidecar replaced 3 of this server's secret values with ***)"


# -- which values a server's answers are redacted of --------------------------------------------


def test_only_values_passed_from_the_environment_are_a_servers_secrets(tmp_path: Path) -> None:
    config = parse_server(
        "s",
        {
            "command": "run",
            "args": ["--root", "${ROOT_DIR}"],
            "env": {"TOKEN": "${API_TOKEN}", "MIXED": "Bearer $API_KEY", "LEVEL": "production-literal"},
        },
        "global",
    )
    environ = {"API_TOKEN": "tok-1234567890", "API_KEY": "key-abcdefgh", "ROOT_DIR": "/home/someone"}
    resolved = resolve(config, tmp_path, environ)
    assert resolved.passed_secrets == {"tok-1234567890", "key-abcdefgh", "Bearer key-abcdefgh"}
    # The log's redaction keeps masking everything it masked before.
    assert {"production-literal", "/home/someone"} <= resolved.secret_values


def test_headers_and_a_client_secret_are_secrets_too(tmp_path: Path) -> None:
    config = parse_server(
        "h",
        {
            "url": "https://example.test/mcp",
            "headers": {"X-Api-Key": "Bearer ${TOKEN}", "X-Plain": "not-from-the-environment"},
            "oauthClientId": "app",
            "oauthClientSecret": "literal-client-secret",
        },
        "global",
    )
    resolved = resolve(config, tmp_path, {"TOKEN": "header-token-1"})
    assert resolved.passed_secrets == {"header-token-1", "Bearer header-token-1", "literal-client-secret"}
