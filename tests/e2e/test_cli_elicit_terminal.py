"""`mcp-sidecar call --elicit` on a real pseudo-terminal, against the unmodified server-everything.

server-everything registers `trigger-elicitation-request` (form) and `trigger-url-elicitation`
only for a client that offers elicitation: the CLI offers it with `--elicit` and nothing
without. The person's side is the pty's master (tests/support/pty_cli.py): it reads the
questions on the terminal and types the answers, Ctrl-C and Ctrl-D included.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli import cli
from support.pty_cli import on_terminal
from support.servers import SERVER_EVERYTHING_JS, fixture_stdio
from support.sidecar import write_config

pytestmark = pytest.mark.skipif(
    not SERVER_EVERYTHING_JS.is_file(), reason="run `cd tests && npm ci` to install server-everything"
)

EVERYTHING = {"command": "node", "args": [str(SERVER_EVERYTHING_JS), "stdio"]}
FORM_TOOL = "everything.trigger-elicitation-request"
URL_TOOL = "everything.trigger-url-elicitation"


@pytest.fixture
def everything(home: Path) -> Path:
    write_config(home, {"everything": EVERYTHING})
    return home


FORM_DIALOGUE = [
    ("The server everything asks. Its message:\n  │ Please provide inputs for the following fields:\n", None),
    ("Field 1 of 13 · text · required\n  │ String (name)\n  │ Your full, legal name\nField 1: ", ""),
    ("This field is required.\nField 1: ", "Ada Lovelace"),
    ("Field 2: ", "y"),
    ("Field 3 [It was a dark and stormy night.]: ", ""),
    ("Field 4: ", "ada at example"),
    ("That is not a valid email; try again.\nField 4: ", "ada@example.org"),
    ("Field 5: ", "-"),
    ("Field 6: ", "1815-12-10"),
    ("Field 7 [42]: ", "101"),
    ("That must be at most 100; try again.\nField 7 [42]: ", ""),
    ("Field 8 [3.14]: ", ""),
    ("  │ 3) Joey\n", None),
    ("Field 9 [1]: ", "3"),
    ("Field 10 [1]: ", "1,2"),
    ("  │ 1) Superman (hero-1)\n", None),
    ("Field 11 [1]: ", ""),
    ("Field 12 [1]: ", ""),
    ("  │ 2) Dogs (pet-2)\n", None),
    ("Field 13 [1]: ", "2"),
]
"""What the terminal shows, in order, and what the person types then (None: nothing yet)."""


async def test_a_form_is_asked_field_by_field_and_sent_after_submit(everything: Path) -> None:
    async with on_terminal(everything, "call", FORM_TOOL, "--elicit") as term:
        for shown, typed in FORM_DIALOGUE:
            await term.expect(shown)
            if typed is not None:
                term.type(typed)
        summary = await term.expect("Submit? y sends it, n declines, Enter cancels: ")
        assert '  │ name: "Ada Lovelace"\n' in summary
        assert '  │ untitledMultipleSelectEnum: ["Guitar", "Piano"]\n' in summary
        assert "homepage" not in summary
        term.type("y")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "User provided the requested information" in run.stdout
    assert "- Name: Ada Lovelace" in run.stdout
    assert "- Agreed to terms: true" in run.stdout
    assert "- Email: ada@example.org" in run.stdout
    assert "- Birthdate: 1815-12-10" in run.stdout
    assert "- Favorite Integer: 42" in run.stdout
    raw = json.loads(run.stdout[run.stdout.index("Raw result: ") + len("Raw result: ") :].strip())
    assert raw["content"] == {
        "name": "Ada Lovelace",
        "check": True,
        "firstLine": "It was a dark and stormy night.",
        "email": "ada@example.org",
        "birthdate": "1815-12-10",
        "integer": 42,
        "number": 3.14,
        "untitledSingleSelectEnum": "Joey",
        "untitledMultipleSelectEnum": ["Guitar", "Piano"],
        "titledSingleSelectEnum": "hero-1",
        "titledMultipleSelectEnum": ["fish-1"],
        "legacyTitledEnum": "pet-2",
    }


async def test_ctrl_c_at_a_question_cancels_the_elicitation_not_the_call(everything: Path) -> None:
    async with on_terminal(everything, "call", FORM_TOOL, "--elicit") as term:
        await term.expect("Field 1: ")
        term.press(b"\x03")
        await term.expect("Cancelled: the server is told you dismissed its question.")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "User cancelled the elicitation dialog" in run.stdout
    assert "Traceback" not in run.stderr


async def test_end_of_input_cancels_and_n_at_the_summary_declines(everything: Path) -> None:
    async with on_terminal(everything, "call", FORM_TOOL, "--elicit") as term:
        await term.expect("Field 1: ")
        term.press(b"\x04")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "User cancelled the elicitation dialog" in run.stdout

    async with on_terminal(everything, "call", FORM_TOOL, "--elicit") as term:
        await term.expect("Field 1: ")
        term.type("Ada")
        for _ in range(12):
            await term.expect(": ")
            term.type("")
        await term.expect("Submit? y sends it, n declines, Enter cancels: ")
        term.type("n")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "User declined to provide the requested information" in run.stdout


async def test_a_url_step_shows_the_host_and_whole_url_and_opens_nothing(everything: Path) -> None:
    arguments = json.dumps({"url": "https://auth.example.com/connect?session=1f2e", "elicitationId": "e-1"})
    async with on_terminal(everything, "call", URL_TOOL, arguments, "--elicit") as term:
        shown = await term.expect("This command opens no browser. Will you open it yourself? [y/N]: ")
        assert "asks you to open a web page. Its message:\n  │ Please open the link to complete this action.\n" in shown
        assert (
            "The page's host: auth.example.com\nIts whole address:\n  │ https://auth.example.com/connect?session=1f2e\n"
        ) in shown
        term.type("y")
        await term.expect("Open this address in your browser:\nhttps://auth.example.com/connect?session=1f2e\n")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "User completed the URL elicitation flow.\nElicitation ID: e-1" in run.stdout

    async with on_terminal(everything, "call", URL_TOOL, arguments, "--elicit") as term:
        await term.expect("Will you open it yourself? [y/N]: ")
        term.type("")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "User declined to open the URL (Elicitation ID: e-1)" in run.stdout


async def test_elicit_without_a_terminal_is_refused_and_without_it_nothing_is_offered(everything: Path) -> None:
    refused = await cli(everything, "call", FORM_TOOL, "--elicit")  # stdin is /dev/null, stderr a pipe
    assert refused.code == 2
    assert refused.stdout == ""
    assert refused.stderr == (
        "mcp-sidecar: --elicit asks on the terminal, but stdin or stderr is not one; run the command in a "
        "terminal, or leave --elicit out (servers are then offered no elicitation)\n"
    )
    plain = await cli(everything, "call", FORM_TOOL)
    assert plain.code == 1
    assert "trigger-elicitation-request" in plain.stderr
    assert "not loaded" in plain.stderr


async def test_a_call_refused_until_a_url_step_asks_it_and_is_not_retried(everything: Path) -> None:
    arguments = json.dumps({"url": "https://auth.example.com/connect", "errorPath": True})
    async with on_terminal(everything, "call", URL_TOOL, arguments, "--elicit") as term:
        shown = await term.expect("Will you open it yourself? [y/N]: ")
        assert "  │ Open this link to satisfy the prerequisite, then retry the request.\n" in shown
        assert (
            "The page's host: modelcontextprotocol.io\nIts whole address:\n  │ https://modelcontextprotocol.io\n"
            in shown
        )
        term.type("n")
        run = await term.finish()
    assert run.code == 1, run.stderr  # the tool's answer is an error: elicitation_required
    assert "it was not accepted, so the tool did not run." in run.stdout  # declined: nobody is told to finish it
    assert run.stderr.count("Will you open it yourself?") == 1  # asked once: the call is not re-run


# -- hostile questions (pushy.py) --------------------------------------------------------------


@pytest.fixture
def pushy(home: Path) -> Path:
    write_config(home, {"pushy": fixture_stdio("pushy.py", "stdio", protocol="legacy")})
    return home


async def test_a_servers_text_cannot_print_lines_that_pass_for_the_clis(pushy: Path) -> None:
    """pushy's form prints `host: …`, `URL: …`, `You would send:`, `Submit? … y` and `Sent.` in its
    message, a title, a description and a choice: on the terminal each is behind the gutter."""
    async with on_terminal(pushy, "call", "pushy.forged_form", "--elicit") as term:
        await term.expect("Field 1: ")
        term.type("2")
        await term.expect("Submit? y sends it, n declines, Enter cancels: ")
        rows = term.screen.splitlines()
        term.type("y")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert 'action: accept {"choice": "b"}' in run.stdout
    assert "  │   host: accounts.google.com" in rows
    assert "  │ Submit? y sends it, n declines, Enter cancels: y" in rows
    assert "  │ Sent." in rows
    assert "  │ 1) host: accounts.google.com (a)" in rows
    forged = {"host:", "URL:", "This command", "You would send:", "password:", "Submit?", "Sent."}
    ours = [row for row in rows if not row.startswith("  │ ")]
    assert [row for row in ours if any(row.strip().startswith(f) for f in forged)] == [
        "You would send:",
        "Submit? y sends it, n declines, Enter cancels: ",  # the one prompt, not yet answered
    ]


async def test_a_form_too_large_for_a_terminal_is_declined_without_printing_it(pushy: Path) -> None:
    """50 fields of 500 choices: 5.2 MB on the terminal before; now one line, and a decline."""
    async with on_terminal(pushy, "call", "pushy.big_form", "--elicit") as term:
        await term.expect("too large to show here")
        run = await term.finish()
    assert run.code == 0, run.stderr
    assert "action: decline" in run.stdout
    assert "choice 1 " not in run.stderr
    assert len(run.stderr) < 2_000
