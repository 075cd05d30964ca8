"""`call --elicit`: a server's questions (MCP elicitation) answered by the person at the terminal.

Headless runs offer servers nothing; `--elicit` offers form and URL elicitation and asks on
the terminal: questions on stderr, answers from stdin, both of which must be a terminal.
A form is asked field by field, defaults shown and kept with Enter, choices numbered, every
value checked against the (sidecar-checked) schema before the next field; nothing is sent
before the person submits the summary. A URL step shows the message, the host and the whole
URL and asks whether the person will open it themselves: the CLI never opens a browser.
End of input (Ctrl-D) or Ctrl-C answers `cancel`.

What reaches the terminal from the server is sanitised (`output/sanitize.py`) once more
here, though the sidecar already cleaned it: this is the last step before a terminal. Every
row of server text (the message, titles, descriptions, choices, the values to send) is shown
behind a gutter, `  │ `, wrapped to the terminal's width (`output/gutter.py`): no row of it can
pass for one of the CLI's own lines, which never start so, nor end up at the start of a row.
The CLI's prompts hold no server text but a default's first characters. A question whose
rendering would pass `MAX_QUESTION_CHARS` is declined without being shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import sys
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from mcp_sidecar.output.elicitation import content_problem
from mcp_sidecar.output.gutter import gutter_lines
from mcp_sidecar.output.sanitize import json_text, one_line

if TYPE_CHECKING:
    from mcp_sidecar.events import ElicitationAsked
    from mcp_sidecar.services.app import Sidecar

OMIT = "-"
"""Typed for an optional field: leave it out (Enter keeps the default instead)."""
MAX_QUESTION_CHARS = 32_000
"""What one question may print at most (its message and every field, choices included)."""
DEFAULT_CHARS = 40
"""A default is shown in the prompt by its first characters at most (the whole in the summary)."""
VALUE_CHARS = 500
"""A value in the summary is shown by its first characters at most."""
COLUMNS = 80
"""The terminal's width when it cannot say."""
_YES = ("y", "yes", "true", "1")
_NO = ("n", "no", "false", "0")


class Cancelled(Exception):
    """End of input or Ctrl-C: the person dismissed the question."""


class Prompter(Protocol):
    @property
    def columns(self) -> int:
        """The terminal's width: server text is wrapped to it."""
        ...

    def say(self, text: str) -> None: ...

    async def ask(self, prompt: str) -> str:
        """One line the person typed (without its newline); Cancelled on end of input or Ctrl-C."""
        ...


def schema_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """Every property's `default`: the form accepted as offered (SEP-1034's defaults)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return {}
    return {name: prop["default"] for name, prop in properties.items() if isinstance(prop, dict) and "default" in prop}


def refusal() -> str | None:
    """Why `--elicit` cannot ask here (no terminal), or None."""
    if not sys.stdin.isatty() or not sys.stderr.isatty():
        return (
            "mcp-sidecar: --elicit asks on the terminal, but stdin or stderr is not one; "
            "run the command in a terminal, or leave --elicit out (servers are then offered no elicitation)"
        )
    return None


def enable(app: Sidecar, prompter: Prompter | None = None) -> None:
    """Offer servers form and URL elicitation, and answer them with `prompter` (default: the terminal)."""
    from mcp_sidecar.connections.client_hooks import ClientOffer
    from mcp_sidecar.events import ElicitationAsked

    asker = prompter if prompter is not None else TerminalPrompter(sys.stdin, sys.stderr)

    async def answerer(request: ElicitationAsked) -> dict[str, Any]:
        return await answer(request.params, asker)

    app.offers.current = ClientOffer(elicitation_form=True, elicitation_url=True)
    app.hub.answer(ElicitationAsked, answerer)


async def answer(params: dict[str, Any], prompter: Prompter) -> dict[str, Any]:
    """`mcp/elicit`'s result for `params`, asked of the person."""
    server = one_line(str(params.get("server", "")))
    try:
        if params.get("mode") == "url":
            return await _url(server, params, prompter)
        return await _form(server, params, prompter)
    except Cancelled:
        prompter.say("\nCancelled: the server is told you dismissed its question.")
        return {"action": "cancel"}


# -- URL mode ---------------------------------------------------------------------------------


def _quoted(prompter: Prompter, text: str) -> None:
    for line in gutter_lines(text, prompter.columns):
        prompter.say(line)


async def _url(server: str, params: dict[str, Any], prompter: Prompter) -> dict[str, Any]:
    url = one_line(str(params.get("url", "")))
    prompter.say(f"\nThe server {server} asks you to open a web page. Its message:")
    _quoted(prompter, str(params.get("message", "")))
    prompter.say(f"The page's host: {one_line(str(params.get('host', '')))}")
    prompter.say("Its whole address:")
    _quoted(prompter, url)
    reply = (await prompter.ask("This command opens no browser. Will you open it yourself? [y/N]: ")).strip().lower()
    if reply not in _YES:
        prompter.say("Declined: the server is told you will not open it.")
        return {"action": "decline"}
    prompter.say("Open this address in your browser:")
    prompter.say(url)
    return {"action": "accept"}


# -- form mode --------------------------------------------------------------------------------


async def _form(server: str, params: dict[str, Any], prompter: Prompter) -> dict[str, Any]:
    schema: dict[str, Any] = params.get("requestedSchema") or {"type": "object", "properties": {}}
    required = set(schema.get("required", []))
    properties: dict[str, Any] = schema.get("properties", {})
    order = [n for n in params.get("order") or () if n in properties]  # the server's order, when given
    names = list(dict.fromkeys([*order, *properties]))
    message = gutter_lines(str(params.get("message", "")), prompter.columns)
    blocks = [_block(i, len(names), properties[n], n, n in required, prompter.columns) for i, n in enumerate(names, 1)]
    size = sum(len(line) + 1 for line in message) + sum(len(line) + 1 for block in blocks for line in block)
    if size > MAX_QUESTION_CHARS:
        prompter.say(
            f"\nThe server {server} asked a question too large to show here ({size:,} characters, "
            f"{len(names)} fields; at most {MAX_QUESTION_CHARS:,}): the server is told it was declined."
        )
        return {"action": "decline"}
    prompter.say(f"\nThe server {server} asks. Its message:")
    for line in message:
        prompter.say(line)
    prompter.say(f"Enter keeps the [default]; {OMIT} leaves an optional field empty.")
    content: dict[str, Any] = {}
    for index, (name, block) in enumerate(zip(names, blocks, strict=True), 1):
        for line in block:
            prompter.say(line)
        value = await _field(index, name, properties[name], name in required, prompter)
        if value is not _OMITTED:
            content[name] = value
    _summary(content, prompter)
    reply = (await prompter.ask("Submit? y sends it, n declines, Enter cancels: ")).strip().lower()
    if reply in _YES:
        return {"action": "accept", "content": content}
    if reply in _NO:
        prompter.say("Declined: the server is told you refused.")
        return {"action": "decline"}
    raise Cancelled


def _summary(content: dict[str, Any], prompter: Prompter) -> None:
    prompter.say("\nYou would send:")
    for name, value in content.items():
        shown = json_text(value, indent=None)
        if len(shown) > VALUE_CHARS:
            shown = f"{shown[:VALUE_CHARS]}… ({len(shown):,} characters in all)"
        for line in gutter_lines(f"{name}: {shown}", prompter.columns):
            prompter.say(line)
    if not content:
        prompter.say("  (nothing)")


class _Omitted:
    pass


_OMITTED: Any = _Omitted()


def _choices(prop: dict[str, Any]) -> list[dict[str, str]]:
    if prop.get("type") == "array":
        return list(prop.get("items", {}).get("anyOf", []))
    return list(prop.get("oneOf", []))


def _block(index: int, count: int, prop: dict[str, Any], name: str, required: bool, columns: int) -> list[str]:
    """A field as shown before its prompt: our line saying what it takes, then the server's words."""
    kind = prop.get("type")
    hint = {"boolean": "y/n", "integer": "a whole number", "number": "a number"}.get(str(kind), "text")
    if "format" in prop:
        hint = str(prop["format"])
    choices = _choices(prop)
    if choices:
        hint = "numbers separated by commas" if kind == "array" else "a number"
    lines = [f"\nField {index} of {count} · {hint}" + (" · required" if required else "")]
    title = prop.get("title")
    label = f"{title} ({name})" if isinstance(title, str) and title != name else name
    lines += gutter_lines(one_line(label), columns)
    if isinstance(prop.get("description"), str):
        lines += gutter_lines(one_line(prop["description"]), columns)
    for number, option in enumerate(choices, 1):
        title, const = one_line(option["title"]), one_line(option["const"])
        lines += gutter_lines(f"{number}) {title}" + (f" ({const})" if const != title else ""), columns)
    return lines


def _shown_default(prop: dict[str, Any]) -> str:
    if "default" not in prop:
        return ""
    default = prop["default"]
    choices = _choices(prop)
    if choices:
        consts = [o["const"] for o in choices]
        picked = default if isinstance(default, list) else [default]
        shown = ",".join(str(consts.index(v) + 1) for v in picked if v in consts)
    elif isinstance(default, bool):
        shown = "y" if default else "n"
    else:
        shown = one_line(str(default))
    return f" [{shown[:DEFAULT_CHARS]}{'…' if len(shown) > DEFAULT_CHARS else ''}]"


async def _field(index: int, name: str, prop: dict[str, Any], required: bool, prompter: Prompter) -> Any:
    prompt = f"Field {index}{_shown_default(prop)}: "
    while True:
        typed = (await prompter.ask(prompt)).strip()
        if not typed and "default" in prop:
            return prop["default"]
        if not typed or typed == OMIT:
            if not required:
                return _OMITTED
            prompter.say("  This field is required.")
            continue
        value, problem = _parse(prop, typed)
        if problem is None:
            found = content_problem({"type": "object", "properties": {name: prop}}, {name: value})
            problem = found.reason if found is not None else None
        if problem is None:
            return value
        prompter.say(f"  That {problem}; try again.")


def _parse(prop: dict[str, Any], typed: str) -> tuple[Any, str | None]:
    """The typed text as the field's JSON value, or the reason it is not one."""
    kind = prop.get("type")
    choices = [o["const"] for o in _choices(prop)]
    if kind == "array":
        picked = [_choice(choices, part.strip()) for part in typed.split(",") if part.strip()]
        if any(p is None for p in picked):
            return None, "is not a list of the numbers shown"
        return list(dict.fromkeys(picked)), None
    if choices:
        choice = _choice(choices, typed)
        return (choice, None) if choice is not None else (None, "is not one of the numbers shown")
    if kind == "boolean":
        if typed.lower() in _YES:
            return True, None
        if typed.lower() in _NO:
            return False, None
        return None, "is not y or n"
    if kind in ("integer", "number"):
        return _number(typed, integer=kind == "integer")
    return typed, None


def _choice(consts: list[str], typed: str) -> str | None:
    if typed.isdecimal() and 1 <= int(typed) <= len(consts):
        return consts[int(typed) - 1]
    return typed if typed in consts else None


def _number(typed: str, integer: bool) -> tuple[Any, str | None]:
    try:
        value = float(typed)
    except ValueError:
        return None, "is not a number"
    if not math.isfinite(value):
        return None, "is not a finite number"
    if integer:
        return (int(value), None) if value.is_integer() else (None, "is not a whole number")
    return (int(value) if value.is_integer() and "." not in typed else value), None


# -- the terminal -----------------------------------------------------------------------------


class TerminalPrompter:
    """Questions on `out`, lines from the terminal `source`, read without a thread.

    A thread blocked in `readline` could not be stopped by Ctrl-C or the answer's time limit
    (and would keep the process alive at exit), so the terminal is read through the event
    loop, and Ctrl-C is caught only while a question is open.
    """

    def __init__(self, source: TextIO, out: TextIO) -> None:
        self._fd = source.fileno()
        self._out = out
        self._pending = b""

    @property
    def columns(self) -> int:
        try:
            return os.get_terminal_size(self._out.fileno()).columns or COLUMNS
        except (OSError, ValueError):
            return COLUMNS

    def say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    async def ask(self, prompt: str) -> str:
        # Ctrl-C is caught from before the prompt shows: a person may press it as soon as it does.
        loop = asyncio.get_running_loop()
        interrupted: asyncio.Future[None] = loop.create_future()

        def on_interrupt() -> None:
            if not interrupted.done():
                interrupted.set_result(None)

        previous = signal.getsignal(signal.SIGINT)
        loop.add_signal_handler(signal.SIGINT, on_interrupt)
        try:
            self._out.write(prompt)
            self._out.flush()
            line = await self._line(interrupted)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            with contextlib.suppress(TypeError, ValueError):
                signal.signal(signal.SIGINT, previous)
        if line is None:
            raise Cancelled
        return line

    async def _line(self, interrupted: asyncio.Future[None]) -> str | None:
        if b"\n" in self._pending:
            return self._take()
        loop = asyncio.get_running_loop()
        done: asyncio.Future[str | None] = loop.create_future()

        def finish(value: str | None) -> None:
            if not done.done():
                done.set_result(value)

        def readable() -> None:
            try:
                chunk = os.read(self._fd, 4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                chunk = b""
            if not chunk:
                finish(None)  # end of input
                return
            self._pending += chunk
            if b"\n" in self._pending:
                finish(self._take())

        interrupted.add_done_callback(lambda _: finish(None))
        loop.add_reader(self._fd, readable)
        try:
            return await done
        finally:
            loop.remove_reader(self._fd)

    def _take(self) -> str:
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")


__all__ = ["Cancelled", "Prompter", "TerminalPrompter", "answer", "enable", "refusal", "schema_defaults"]
