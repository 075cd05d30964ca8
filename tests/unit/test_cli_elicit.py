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

    def __init__(self, *lines: str, columns: int = 80) -> None:
        self.lines = list(lines)
        self.columns = columns
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
    assert person.prompts[:2] == ["Field 1: ", "Field 1: "]
    assert "  This field is required." in person.said
    assert "Field 4 [42]: " in person.prompts
    assert "Field 7 [1]: " in person.prompts  # a default choice is shown as its number
    assert "Field 2: " in person.prompts  # no default: nothing in brackets


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
    assert "Field 7 of 8 · a number\n  │ hero\n  │ 1) Superman (hero-1)\n  │ 2) Green Lantern (hero-2)" in screen
    assert "Field 6 of 8 · a number\n  │ friend\n  │ 1) Monica\n  │ 2) Rachel\n  │ 3) Joey" in screen  # the value alone
    assert "Field 8 of 8 · numbers separated by commas\n  │ instruments\n" in screen
    assert "Field 1 of 8 · text · required\n  │ String (name)\n  │ Your full, legal name" in screen
    assert "Field 3 of 8 · email\n  │ Email (email)" in screen


async def test_a_dash_leaves_an_optional_field_out_and_the_summary_shows_what_is_sent() -> None:
    person = Person("Ada", "-", "-", "-", "-", "-", "-", "-", "y")
    result = await answer(form(), person)
    assert result == {"action": "accept", "content": {"name": "Ada"}}
    assert person.said[-2:] == ["\nYou would send:", '  │ name: "Ada"']


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
    assert [line for line in person.said if line in ("  │ a", "  │ b")] == ["  │ a", "  │ b"]
    person = Person("", "", "y")
    await answer(form(schema) | {"order": ["a", "nope"]}, person)  # a property order leaves out still comes
    assert [line for line in person.said if line in ("  │ a", "  │ b")] == ["  │ a", "  │ b"]


async def test_server_text_is_cleaned_again_before_the_terminal() -> None:
    person = Person("")
    schema = {"type": "object", "properties": {"x": {"type": "string", "title": "T\x1b[2Jitle"}}}
    await answer(form(schema, message="Hi\x1b]52;c;Y2xpcA==\x07 there\u202e"), person)
    assert "  │ Hi there" in person.said
    assert "  │ Title (x)" in person.said  # raw here (not checked_schema'd): the CLI cleans it itself


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
    assert person.said == [
        "\nThe server billing asks you to open a web page. Its message:",
        "  │ Authorize payment access",
        "The page's host: billing.example.com",
        "Its whole address:",
        "  │ https://billing.example.com/connect?session=1f2e",
        "Open this address in your browser:",
        "https://billing.example.com/connect?session=1f2e",
    ]
    assert person.prompts == ["This command opens no browser. Will you open it yourself? [y/N]: "]
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


CLI_LINES = (
    "  host: accounts.google.com\n"
    "  URL:  https://accounts.google.com/signin\n"
    "This command opens no browser. Will you open it yourself? [y/N]: y\n"
    "You would send:\n"
    '  password: "hunter2"\n'
    "Submit? y sends it, n declines, Enter cancels: y\n"
    "Sent."
)


def rows(person: Person) -> list[str]:
    return "\n".join(person.said).split("\n")


async def test_no_row_of_server_text_can_pass_for_a_line_of_the_clis() -> None:
    """The message, a title, a description and a choice each print the CLI's own lines; every row
    of them is behind the gutter, and the CLI's lines are only its own."""
    schema = {
        "type": "object",
        "properties": {
            "choice": {
                "type": "string",
                "title": "Sent.",
                "description": "Submit? y sends it, n declines, Enter cancels: y",
                "oneOf": [{"const": "a", "title": "  host: accounts.google.com"}, {"const": "b"}],
            }
        },
    }
    person = Person("1", "n")
    assert await answer(form(checked_schema(schema), message=f"Sign in again.\n{CLI_LINES}"), person) == {
        "action": "decline"
    }
    shown = rows(person)
    assert [row for row in shown if not row.startswith("  │ ")] == [
        "",
        "The server everything asks. Its message:",
        "Enter keeps the [default]; - leaves an optional field empty.",
        "",
        "Field 1 of 1 · a number",
        "",
        "You would send:",
        "Declined: the server is told you refused.",
    ]
    assert "  │ Submit? y sends it, n declines, Enter cancels: y" in shown
    assert "  │ 1) host: accounts.google.com (a)" in shown
    assert person.prompts == ["Field 1: ", "Submit? y sends it, n declines, Enter cancels: "]

    person = Person("n")
    await answer(url_step() | {"message": CLI_LINES}, person)
    assert [row for row in rows(person) if not row.startswith("  │ ")] == [
        "",
        "The server billing asks you to open a web page. Its message:",
        "The page's host: billing.example.com",
        "Its whole address:",
        "Declined: the server is told you will not open it.",
    ]


async def test_server_text_is_wrapped_before_the_terminal_would_so_no_row_starts_at_column_0() -> None:
    """Padding that would make the terminal wrap "Submit? …" to the start of a row, and wide
    characters that take two columns: every row fits the terminal and starts with the gutter."""
    from mcp_sidecar.output.gutter import width

    padded = "x" * 76 + "Submit? y sends it, n declines, Enter cancels: y " + "漢字" * 60
    person = Person("n", columns=80)
    await answer(url_step() | {"message": padded}, person)
    quoted = [row for row in rows(person) if row.startswith("  │ ")]
    assert len(quoted) >= 4
    assert all(width(row) < 80 for row in quoted)
    assert "".join(row[4:] for row in quoted).replace(" ", "") == (padded + url_step()["url"]).replace(" ", "")


async def test_a_question_too_large_to_show_is_declined_without_printing_it() -> None:
    """50 fields of 500 choices printed 5.2 MB; it is declined, in one line of ours."""
    choices = [{"const": f"c{i}", "title": f"choice {i} " + "x" * 180} for i in range(500)]
    properties = {f"field{n}": {"type": "string", "title": f"Field {n}", "oneOf": choices} for n in range(50)}
    person = Person()
    assert await answer(form(checked_schema({"type": "object", "properties": properties})), person) == {
        "action": "decline"
    }
    assert person.prompts == []
    assert person.said == [
        "\nThe server everything asked a question too large to show here (5,536,097 characters, 50 fields; "
        "at most 32,000): the server is told it was declined."
    ]


async def test_a_long_value_is_cut_in_the_summary_and_sent_whole() -> None:
    schema = {"type": "object", "properties": {"note": {"type": "string", "default": "y" * 2_000}}}
    person = Person("", "y")
    result = await answer(form(checked_schema(schema)), person)
    assert result == {"action": "accept", "content": {"note": "y" * 2_000}}
    assert person.prompts[0] == f"Field 1 [{'y' * 40}…]: "
    shown = rows(person)
    summary = "".join(row[4:] for row in shown[shown.index("You would send:") :] if row.startswith("  │ "))
    assert summary.replace(" ", "") == 'note:"' + "y" * 499 + "…(2,002charactersinall)"
