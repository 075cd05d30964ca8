"""What a server may ask (output/elicitation.py) and what the editor offers (client_hooks.ClientOffer)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.connections.client_hooks import ClientOffer, HumanTime
from mcp_sidecar.output.elicitation import (
    SchemaRefused,
    checked_schema,
    content_problem,
    message_text,
    opened_url,
    url_host,
)


def form(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_every_single_select_form_arrives_as_one_of() -> None:
    schema = checked_schema(
        form(
            plain={"type": "string", "enum": ["a", "b"], "default": "b"},
            legacy={"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"]},
            titled={"type": "string", "oneOf": [{"const": "1", "title": "One"}]},
        )
    )
    props = schema["properties"]
    assert props["plain"] == {
        "type": "string",
        "oneOf": [{"const": "a", "title": "a"}, {"const": "b", "title": "b"}],
        "default": "b",
    }
    assert props["legacy"]["oneOf"] == [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]
    assert props["titled"]["oneOf"] == [{"const": "1", "title": "One"}]


def test_multi_selects_arrive_as_items_any_of_and_bad_defaults_are_dropped() -> None:
    schema = checked_schema(
        form(
            tags={"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1, "default": ["a"]},
            fish={"type": "array", "items": {"anyOf": [{"const": "f", "title": "Fish"}]}, "default": ["nope"]},
            count={"type": "integer", "default": 2.5},
            choice={"type": "string", "enum": ["a"], "default": "z"},
        )
    )
    props = schema["properties"]
    assert props["tags"] == {
        "type": "array",
        "items": {"anyOf": [{"const": "a", "title": "a"}, {"const": "b", "title": "b"}]},
        "minItems": 1,
        "default": ["a"],
    }
    assert "default" not in props["fish"]
    assert "default" not in props["count"]
    assert "default" not in props["choice"]


def test_server_text_in_a_schema_is_cleaned_and_unknown_keys_go() -> None:
    schema = checked_schema(
        {
            "$schema": "x",
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Na\x1b[31mme\u202e", "pattern": ".*", "x-secret": 1}},
            "required": ["name", "name"],
        }
    )
    assert schema == {
        "type": "object",
        "properties": {"name": {"type": "string", "title": "Name"}},
        "required": ["name"],
    }


@pytest.mark.parametrize(
    "schema",
    [
        form(address={"type": "object", "properties": {}}),
        form(items={"type": "array", "items": {"type": "string"}}),
        form(when={"type": "string", "format": "ipv4"}),
        form(**{"bad\nname": {"type": "string"}}),
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
        form(**{f"f{i}": {"type": "string"} for i in range(51)}),
        form(pick={"type": "string", "enum": [str(i) for i in range(501)]}),
        # A choice's value goes back as sent: one the person cannot read as sent is refused.
        form(pick={"type": "string", "enum": ["\x1b]8;;https://evil.example\x07"]}),
        form(pick={"type": "string", "oneOf": [{"const": "a\u202eb", "title": "ab"}]}),
        form(pick={"type": "string", "enum": [""]}),
        {"type": "array"},
        "not a schema",
    ],
)
def test_anything_but_the_flat_form_is_refused(schema: Any) -> None:
    with pytest.raises(SchemaRefused):
        checked_schema(schema)


SCHEMA = checked_schema(
    {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "born": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "score": {"type": "number", "maximum": 1},
            "ok": {"type": "boolean"},
            "pet": {"type": "string", "enum": ["cat", "dog"]},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 2},
        },
    }
)


def test_a_fitting_answer_passes() -> None:
    content = {
        "name": "Ada",
        "email": "ada@example.org",
        "site": "https://example.org",
        "born": "1815-12-10",
        "at": "2026-12-01T10:00:00Z",
        "age": 36,
        "score": 0.5,
        "ok": True,
        "pet": "cat",
        "tags": ["a", "c"],
    }
    assert content_problem(SCHEMA, content) is None
    assert content_problem(SCHEMA, {"name": "Ada", "age": None}) is None  # null for an optional field


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({}, "name"),
        ({"name": "A"}, "name"),
        ({"name": "Ada Lovelace"}, "name"),
        ({"name": 5}, "name"),
        ({"name": "Ada", "email": "ada"}, "email"),
        ({"name": "Ada", "site": "no scheme"}, "site"),
        ({"name": "Ada", "born": "10/12/1815"}, "born"),
        ({"name": "Ada", "at": "yesterday"}, "at"),
        ({"name": "Ada", "age": 1.5}, "age"),
        ({"name": "Ada", "age": True}, "age"),
        ({"name": "Ada", "age": 200}, "age"),
        ({"name": "Ada", "score": 2}, "score"),
        ({"name": "Ada", "ok": "yes"}, "ok"),
        ({"name": "Ada", "pet": "cow"}, "pet"),
        ({"name": "Ada", "tags": ["a", "b", "c"]}, "tags"),
        ({"name": "Ada", "tags": ["z"]}, "tags"),
        ({"name": "Ada", "extra": 1}, "extra"),
    ],
)
def test_an_answer_that_does_not_fit_names_the_field(content: dict[str, Any], field: str) -> None:
    problem = content_problem(SCHEMA, content)
    assert problem is not None
    assert problem.field == field


def test_numbers_no_json_parser_reads_and_odd_defaults_are_dropped_not_fatal() -> None:
    schema = checked_schema(
        form(
            big={"type": "integer", "default": 10**400, "maximum": float("inf")},
            nan={"type": "number", "minimum": float("nan"), "default": float("-inf")},
            listed={"type": "string", "enum": ["a"], "default": ["a"]},
            hidden={"type": "string", "default": "x\u202ey"},
        )
    )
    assert schema["properties"] == {
        "big": {"type": "integer"},
        "nan": {"type": "number"},
        "listed": {"type": "string", "oneOf": [{"const": "a", "title": "a"}]},
        "hidden": {"type": "string"},
    }
    problem = content_problem(schema, {"big": 10**400})
    assert problem is not None
    assert problem.reason == "must be a number"


def test_the_message_keeps_its_lines_and_loses_what_hides() -> None:
    assert message_text("line one\nline \x1b]52;c;AAAA\x07two\u200b") == "line one\nline two"
    assert len(message_text("x" * 10_000)) == 4_001


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.ORG/a?b=c", "example.org"),
        ("https://bücher.example/x", "xn--bcher-kva.example"),
        ("http://127.0.0.1:8080/cb", "127.0.0.1"),
    ],
)
def test_a_url_shows_its_host(url: str, host: str) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://exa mple.org",
        "https://a.org/\u202e",
        "https:///path",
        "x" * 9000,
    ],
)
def test_a_url_without_a_plain_web_host_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        url_host(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example\\@github.com/login",  # WHATWG reads \ as /: the host is evil.example
        "https://github.com@evil.example/",  # user information reads as a host to a person
        "https://git%68ub.com/",  # browsers decode an escaped host
        "https://[::1]/",
    ],
)
def test_a_url_parsers_disagree_on_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        opened_url(url)


def test_the_url_shown_is_rebuilt_from_what_was_read_with_the_host_browsers_resolve() -> None:
    # UTS 46 without transitional mapping, as browsers: ß stays (IDNA 2003 would show "ss").
    assert opened_url("https://paßword.example/reset") == (
        "https://xn--paword-cta.example/reset",
        "xn--paword-cta.example",
    )
    assert opened_url("HTTPS://Example.ORG.:8443/a?b=1#c") == ("https://example.org:8443/a?b=1#c", "example.org")


@pytest.mark.parametrize(
    ("url", "opened"),
    [
        ("http://0x7f.1/cb", "http://127.0.0.1/cb"),
        ("http://2130706433:8080/cb?x=1", "http://127.0.0.1:8080/cb?x=1"),
        ("https://0177.0.0.1/", "https://127.0.0.1/"),
        ("https://127.1/", "https://127.0.0.1/"),
        ("https://0x7F000001/", "https://127.0.0.1/"),
        ("https://169.254.0x10.0376/latest", "https://169.254.16.254/latest"),
        ("https://0xa9fea9fe/", "https://169.254.169.254/"),
        ("https://1.2.3.4./", "https://1.2.3.4/"),
        ("https://0x7f\uff0e1/", "https://127.0.0.1/"),  # a full-width dot maps to "." first (UTS 46)
    ],
)
def test_a_numeric_host_is_shown_as_the_address_a_browser_opens(url: str, opened: str) -> None:
    """WHATWG URL parsing reads a host ending in a number as IPv4 (hex, octal, fewer parts)."""
    host = opened.split("/")[2].split(":")[0]
    assert opened_url(url) == (opened, host)


@pytest.mark.parametrize(
    "url", ["https://1.2.3.0x100/", "https://1.2.3.4.5/", "https://foo.0x1/", "https://4294967296/"]
)
def test_a_host_that_ends_in_a_number_but_is_no_address_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        opened_url(url)


@pytest.mark.parametrize(
    ("declared", "offer"),
    [
        (None, ClientOffer()),
        ({}, ClientOffer()),
        ({"elicitation": {}}, ClientOffer(elicitation_form=True)),
        ({"elicitation": {"url": {}}}, ClientOffer(elicitation_url=True)),
        ({"elicitation": {"form": {}, "url": {}}, "sampling": {}}, ClientOffer(True, True, True)),
        ({"elicitation": True, "sampling": "yes"}, ClientOffer()),
        ("everything", ClientOffer()),
    ],
)
def test_the_offer_is_what_the_editor_declared(declared: Any, offer: ClientOffer) -> None:
    assert ClientOffer.from_capabilities(declared) == offer
    assert ClientOffer.from_capabilities(offer.to_json()) == offer


def test_human_time_counts_only_while_a_question_is_open() -> None:
    human = HumanTime()
    assert human.spent() == 0.0
    assert not human.asking
    human.begin()
    human.begin()
    assert human.asking
    human.end()
    assert human.asking
    human.end()
    spent = human.spent()
    assert not human.asking
    assert spent >= 0.0
    assert human.spent() == spent  # nothing counts once every question is answered
