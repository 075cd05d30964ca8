"""`call --elicit`'s terminal prompt (cli_elicit.py), with a scripted person instead of a terminal.

The forms are what the sidecar hands an answerer: `checked_schema` of a server's schema (here
server-everything's `trigger-elicitation-request` form, in part). The end-to-end run through a
real pseudo-terminal is tests/e2e/test_cli_elicit_terminal.py.
"""

from __future__ import annotations

from typing import Any

from mcp_sidecar.cli_conformance import accept_defaults
from mcp_sidecar.cli_elicit import Cancelled, answer, schema_defaults
from mcp_sidecar.events import ElicitationAsked
from mcp_sidecar.output.elicitation import checked_schema

EVERYTHING_FORM = checked_schema(
    {
        "type": "object",
        "properties": {
            "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
            "check": {"title": "Boolean", "type": "boolean"},
            "email": {"title": "Email", "type": "string", "format": "email"},
            "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
            "friend": {"type": "string", "enum": ["Monica", "Rachel", "Joey"], "default": "Monica"},
            "hero": {
                "type": "string",
                "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}],
                "default": "hero-1",
            },
            "instruments": {
                "type": "array",
                "minItems": 1,
                "maxItems": 2,
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin"]},
                "default": ["Guitar"],
            },
        },
        "required": ["name"],
    }
)


class Person:
    """Types `lines` in order at each prompt; past the end, end of input (Ctrl-D)."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    async def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise Cancelled
        return self.lines.pop(0)

    @property
    def screen(self) -> str:
        return "\n".join(self.said)


def form(schema: dict[str, Any] = EVERYTHING_FORM, message: str = "Please provide inputs") -> dict[str, Any]:
    return {"server": "everything", "mode": "form", "message": message, "requestedSchema": schema}


async def test_enter_keeps_every_default_and_a_required_field_is_asked_again() -> None:
    person = Person("", "Ada Lovelace", "", "", "", "", "", "", "", "y")
    result = await answer(form(), person)
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada Lovelace",
            "integer": 42,
            "number": 3.14,
            "friend": "Monica",
            "hero": "hero-1",
            "instruments": ["Guitar"],
        },
    }
    assert person.prompts[:2] == ["name: ", "name: "]
    assert "  This field is required." in person.said
    assert "integer [42]: " in person.prompts
    assert "hero [1]: " in person.prompts  # a default choice is shown as its number
    assert "check: " in person.prompts  # no default: nothing in brackets


async def test_values_are_parsed_and_checked_before_the_next_field() -> None:
    person = Person("Ada", "yes", "nope", "ada@example.org", "abc", "500", "7", "2.5", "9", "2", "Green Lantern")
    person.lines += ["hero-2", "1,2,3", "3, 2", "y"]
    result = await answer(form(), person)
    assert result == {
        "action": "accept",
        "content": {
            "name": "Ada",
            "check": True,
            "email": "ada@example.org",
            "integer": 7,
            "number": 2.5,
            "friend": "Rachel",
            "hero": "hero-2",
            "instruments": ["Violin", "Piano"],
        },
    }
    problems = [line for line in person.said if line.startswith("  That ")]
    assert problems == [
        "  That is not a valid email; try again.",
        "  That is not a number; try again.",
        "  That must be at most 100; try again.",
        "  That is not one of the numbers shown; try again.",
        "  That is not one of the numbers shown; try again.",  # a title is not a value
        "  That allows at most 2 choices; try again.",
    ]


async def test_choices_are_listed_with_their_numbers_and_values() -> None:
    person = Person("Ada", "", "", "", "", "", "", "", "")
    await answer(form(), person)
    screen = person.screen
    assert "hero · a number\n  1) Superman (hero-1)\n  2) Green Lantern (hero-2)" in screen
    assert "friend · a number\n  1) Monica\n  2) Rachel\n  3) Joey" in screen  # untitled: the value alone
    assert "instruments · numbers separated by commas" in screen
    assert "String (name) * · text\n  Your full, legal name" in screen
    assert "Email (email) · email" in screen


async def test_a_dash_leaves_an_optional_field_out_and_the_summary_shows_what_is_sent() -> None:
    person = Person("Ada", "-", "-", "-", "-", "-", "-", "-", "y")
    result = await answer(form(), person)
    assert result == {"action": "accept", "content": {"name": "Ada"}}
    assert person.said[-2:] == ["\nYou would send:", '  name: "Ada"']


async def test_n_at_the_summary_declines_and_enter_cancels() -> None:
    declined = await answer(form(), Person("Ada", *[""] * 7, "n"))
    assert declined == {"action": "decline"}
    cancelled = await answer(form(), Person("Ada", *[""] * 7, ""))
    assert cancelled == {"action": "cancel"}


async def test_end_of_input_in_the_middle_of_a_form_cancels_it() -> None:
    person = Person("Ada", "y")
    assert await answer(form(), person) == {"action": "cancel"}
    assert person.said[-1] == "\nCancelled: the server is told you dismissed its question."


async def test_fields_are_asked_in_the_order_the_server_wrote_them() -> None:
    schema = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string"}}}
    person = Person("", "", "y")
    await answer(form(schema) | {"order": ["a", "b"]}, person)
    assert person.prompts[:2] == ["a: ", "b: "]
    person = Person("", "", "y")
    await answer(form(schema) | {"order": ["a", "nope"]}, person)  # a property order leaves out still comes
    assert person.prompts[:2] == ["a: ", "b: "]


async def test_server_text_is_cleaned_again_before_the_terminal() -> None:
    person = Person("")
    schema = {"type": "object", "properties": {"x": {"type": "string", "title": "T\x1b[2Jitle"}}}
    await answer(form(schema, message="Hi\x1b]52;c;Y2xpcA==\x07 there\u202e"), person)
    assert "Hi there" in person.said
    assert "\nTitle (x) · text" in person.said  # raw here (not checked_schema'd): the CLI cleans it itself


def url_step(url: str = "https://billing.example.com/connect?session=1f2e") -> dict[str, Any]:
    return {
        "server": "billing",
        "mode": "url",
        "message": "Authorize payment access",
        "url": url,
        "host": "billing.example.com",
        "elicitationId": "e-7c1",
    }


async def test_a_url_step_shows_host_and_url_and_is_accepted_only_with_yes() -> None:
    person = Person("y")
    assert await answer(url_step(), person) == {"action": "accept"}
    assert person.said[1:4] == [
        "Authorize payment access",
        "  host: billing.example.com",
        "  URL:  https://billing.example.com/connect?session=1f2e",
    ]
    assert person.prompts == ["This command opens no browser. Will you open it yourself? [y/N]: "]
    assert person.said[-2:] == [
        "Open this address in your browser:",
        "https://billing.example.com/connect?session=1f2e",
    ]
    assert await answer(url_step(), Person("")) == {"action": "decline"}
    assert await answer(url_step(), Person("no")) == {"action": "decline"}
    assert await answer(url_step(), Person()) == {"action": "cancel"}


def test_schema_defaults_are_every_default_of_the_form() -> None:
    assert schema_defaults(EVERYTHING_FORM) == {
        "integer": 42,
        "number": 3.14,
        "friend": "Monica",
        "hero": "hero-1",
        "instruments": ["Guitar"],
    }
    assert schema_defaults({"type": "object"}) == {}


async def test_the_conformance_client_accepts_forms_with_their_defaults_and_declines_urls() -> None:
    accepted = await accept_defaults(ElicitationAsked("conformance", form()))
    assert accepted == {"action": "accept", "content": schema_defaults(EVERYTHING_FORM)}
    assert await accept_defaults(ElicitationAsked("conformance", url_step())) == {"action": "decline"}
