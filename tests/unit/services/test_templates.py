"""Template expansion through the SDK, with the sidecar's argument and URI limits."""

from __future__ import annotations

import pytest

from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.reading import check_uri, expand


def code_of(error: pytest.ExceptionInfo[SidecarError]) -> tuple[str, str]:
    return error.value.diagnostic.code, error.value.diagnostic.message


@pytest.mark.parametrize(
    ("template", "arguments", "uri"),
    [
        ("notes://{folder}/{name}", {"folder": "inbox", "name": "a b"}, "notes://inbox/a%20b"),
        ("data://files{/path*}", {"path": ["a", "b"]}, "data://files/a/b"),
        ("data://search{?q,lang}", {"q": "mcp", "lang": "en"}, "data://search?q=mcp&lang=en"),
    ],
)
def test_expansion(template: str, arguments: dict[str, object], uri: str) -> None:
    assert expand(template, arguments, "read", "s") == uri


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"folder": "inbox"}, "Missing template argument(s): name."),
        ({"folder": "inbox", "name": "x", "extra": "y"}, "Argument(s) not in the template: extra."),
        ({"folder": 1, "name": "x"}, "Argument 'folder' must be a string or an array of strings."),
        ({"folder": "a" * 70_000, "name": "x"}, "The template arguments exceed 64 KiB."),
        ({"folder": "a" * 4_100, "name": "x"}, "The expanded URI is longer than 4096 characters."),
    ],
)
def test_invalid_arguments(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(SidecarError) as error:
        expand("notes://{folder}/{name}", arguments, "read", "s")
    assert code_of(error) == ("resource_invalid", message)


def test_unsupported_template_levels_get_a_clear_diagnostic() -> None:
    with pytest.raises(SidecarError) as error:
        expand("data://cut/{name:3}", {"name": "abcdef"}, "read", "s")
    code, message = code_of(error)
    assert code == "resource_invalid"
    assert "features the SDK cannot expand" in message


@pytest.mark.parametrize("uri", ["relative/path", "no-scheme", "has space:x", "x:", "a" * 10 + ":" + "b" * 4_090])
def test_uris_must_be_exact_absolute_and_short(uri: str) -> None:
    with pytest.raises(SidecarError) as error:
        check_uri(uri, "read", "s")
    assert error.value.diagnostic.code == "resource_invalid"


@pytest.mark.parametrize("uri", ["file:///etc/hosts", "https://example.com/x", "notes://readme", "urn:isbn:1"])
def test_absolute_uris_pass(uri: str) -> None:
    check_uri(uri, "read", "s")
