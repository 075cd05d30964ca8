"""The client half of MCP a server may ask for: elicitation, sampling, roots and logging.

A server's question goes to the editor as an event with a reply (`events.ElicitationAsked`,
`events.SamplingAsked`), asked through the hub, so nothing here knows about pygls. What the
sidecar offers a server is what the editor said it can render (`ClientOffer`), fixed when a
connection is made. A person may take minutes: that time is counted (`HumanTime`) so a tool
call's own time limit stops while its server waits for an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.connections.questions import CallQuestions, QuestionBudget
from mcp_sidecar.events import ElicitationAsked, NoAnswerer, SamplingAsked
from mcp_sidecar.output import elicitation
from mcp_sidecar.output.redact import Redactor
from mcp_sidecar.output.sanitize import one_line, strip_controls
from mcp_sidecar.protocol import apps

if TYPE_CHECKING:
    from mcp_sidecar.connections.stderr_log import StderrLog

log = logging.getLogger(__name__)

ANSWER_TIMEOUT_S = 600.0
"""How long a person may take to answer a server's question."""
LOG_TEXT_CHARS = 2_000
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
NOTIFIED_LEVEL = "warning"
"""Log messages at this level or above reach the editor as `mcp/serverLog`."""
LOGS_PER_SECOND = 20
MAX_WAITING = 3
MAX_SAMPLING_CHARS = 100_000
"""A sampling request larger than this (as JSON) is refused: no person can review it."""
"""Questions of one server queued behind the open one; more are not shown."""
Action = Literal["accept", "decline", "cancel"]

NOT_SUPPORTED = -32600
"""MCP's INVALID_REQUEST: what a server that asks for something not offered gets."""
DECLINED = -1
"""MCP's code for a sampling request the user declined (the editor answers it so too)."""
EDITOR_FAILED = -32603
"""What a server hears when the editor could not answer (no answer in time, an error, a bad shape)."""
LSP_REQUEST_FAILED = -32803
DECLINED_MESSAGE = "The user declined the request"
USER_DECLINED = object()
"""`_ask`'s answer when the editor answered the error `DECLINED`."""
UNSHOWN = object()
"""`_ask`'s answer for a question past the server's limits (`questions.py`): declined, never shown."""


@dataclass(frozen=True, slots=True)
class ClientOffer:
    """What the editor can render for a server; offered to servers as MCP client capabilities."""

    elicitation_form: bool = False
    elicitation_url: bool = False
    sampling: bool = False
    apps: bool = False
    """MCP Apps (`protocol/apps.py`): the client renders `ui://` app resources."""

    @classmethod
    def from_capabilities(cls, capabilities: Any) -> ClientOffer:
        """`initializationOptions.mcpCapabilities`: `{"elicitation": {"form": {}, "url": {}}, "sampling": {},
        "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}`."""
        if not isinstance(capabilities, dict):
            return cls()
        elicit = capabilities.get("elicitation")
        form = url = False
        if isinstance(elicit, dict):
            form = isinstance(elicit.get("form"), dict)
            url = isinstance(elicit.get("url"), dict)
            form = form or not url  # MCP: an elicitation capability without modes means form
        return cls(
            elicitation_form=form,
            elicitation_url=url,
            sampling=isinstance(capabilities.get("sampling"), dict),
            apps=apps.declared(capabilities),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        modes: dict[str, Any] = {
            mode: {} for mode, on in (("form", self.elicitation_form), ("url", self.elicitation_url)) if on
        }
        if modes:
            out["elicitation"] = modes
        if self.sampling:
            out["sampling"] = {}
        if self.apps:
            out["extensions"] = {apps.EXTENSION: apps.SETTINGS}
        return out


def _nobody() -> object:
    return None


@dataclass(frozen=True, slots=True)
class ClientSide:
    """What every connection shares: the editor's offer, the roots, and the way to ask the editor."""

    offer: Callable[[], ClientOffer] = ClientOffer
    roots: Callable[[], list[tuple[str, str]]] = list
    """The roots to disclose now, `(file: URI, name)`; empty while the workspace is not trusted."""
    ask: Callable[[object, float], Awaitable[Any]] | None = None
    whose: Callable[[], object] = _nobody
    """Whose request goes in flight, read in that request's own task (services/questions.py: the
    client whose operation runs). Opaque here."""
    asking_for: Callable[[Any], contextlib.AbstractContextManager[object]] = contextlib.nullcontext
    """Puts a question to `ask` for what `whose` said of the requests in flight (all of one client,
    else the question is not shown): a server's question is answered in a task of the connection's,
    not the request's, so who asks is carried."""


class HumanTime:
    """Time one server's questions have been open, so call time limits can leave it out."""

    def __init__(self) -> None:
        self._open = 0
        self._since = 0.0
        self._total = 0.0

    @property
    def asking(self) -> bool:
        return self._open > 0

    def begin(self) -> None:
        if self._open == 0:
            self._since = time.monotonic()
        self._open += 1

    def end(self) -> None:
        self._open -= 1
        if self._open == 0:
            self._total += time.monotonic() - self._since

    def spent(self) -> float:
        return self._total + (time.monotonic() - self._since if self._open else 0.0)


@dataclass
class _LogBudget:
    window: float = 0.0
    sent: int = 0


@dataclass
class ClientHooks:
    """One connection's answers to its server; `kwargs()` are the SDK `Client`'s callbacks."""

    server: str
    side: ClientSide
    log: StderrLog
    on_log: Callable[[str, str | None, str, bool], None]
    """(level, logger, text, notify) of every message at `log_level` or above; `notify`: for the editor
    too (at `NOTIFIED_LEVEL` or above, within the per-second budget)."""
    log_level: str = "warning"
    roots_enabled: bool = True
    offer: ClientOffer = field(default_factory=ClientOffer)
    redaction: Redactor = field(default_factory=Redactor)
    """The values the current connection attempt gave the server (`Connection.redaction`)."""
    human: HumanTime = field(default_factory=HumanTime)
    asked_urls: set[str] = field(default_factory=set)
    """Elicitation ids this sidecar asked the person about: only their completions are passed on."""
    questions: QuestionBudget = field(default_factory=QuestionBudget)
    """How many questions it may still put to the person (kept across reconnects)."""
    task_progress: dict[str, Callable[[float | None, float | None, str | None], None]] = field(default_factory=dict)
    """2025-11-25 tasks' progress tokens -> their calls' progress sinks: a task's token stays valid until
    its end, past the answer to `tools/call` the SDK follows progress for (`task_calls.py`)."""
    _one_at_a_time: asyncio.Lock = field(default_factory=asyncio.Lock)
    _budget: _LogBudget = field(default_factory=_LogBudget)
    _completions: dict[str, asyncio.Event] = field(default_factory=dict)
    _waiting: int = 0
    _open: set[asyncio.Task[Any]] = field(default_factory=set)
    """The tasks waiting for the editor's answer, withdrawn when the session ends."""
    _in_flight: list[object] = field(default_factory=list)
    """`side.whose()` of each request of ours in flight, latest last."""

    def new_session(self) -> None:
        self.offer = self.side.offer()
        self.asked_urls.clear()
        self._completions.clear()

    def completed(self, elicitation_id: str) -> bool:
        """The server's `notifications/elicitation/complete`: True the first time for an id the person consented to."""
        if elicitation_id not in self.asked_urls:
            return False
        self.asked_urls.discard(elicitation_id)  # one notice per step reaches the editor
        self._completions.setdefault(elicitation_id, asyncio.Event()).set()
        return True

    def is_completed(self, elicitation_id: str) -> bool:
        event = self._completions.get(elicitation_id)
        return event is not None and event.is_set()

    def withdraw(self) -> None:
        """The session ended: every open question is cancelled (the editor gets `$/cancelRequest`)."""
        for task in list(self._open):
            task.cancel()

    def kwargs(self) -> dict[str, Any]:
        """The SDK `Client`'s keyword arguments: only the callbacks of what is offered."""
        self.new_session()
        from mcp_sidecar.connections.task_extension import apps_extension, tasks_extension

        # Tasks (2026-07-28's extension): the sidecar follows them itself, for any client of its own.
        out: dict[str, Any] = {"logging_callback": self._logged, "log_level": self.log_level}
        out["extensions"] = [tasks_extension()]
        if self.offer.apps:
            out["extensions"].append(apps_extension())
        if self.offer.elicitation_form or self.offer.elicitation_url:
            out["elicitation_callback"] = self._elicit
        if self.offer.sampling:
            out["sampling_callback"] = self._sample
        if self.roots_enabled:
            out["list_roots_callback"] = self._roots
        return out

    def elicitation_capability(self) -> Any:
        """MCP's ElicitationCapability with only the offered modes (the SDK would offer both)."""
        from mcp_types import ElicitationCapability, FormElicitationCapability, UrlElicitationCapability

        return ElicitationCapability(
            form=FormElicitationCapability() if self.offer.elicitation_form else None,
            url=UrlElicitationCapability() if self.offer.elicitation_url else None,
        )

    # -- asking the editor ---------------------------------------------------------------------

    @contextlib.contextmanager
    def request_in_flight(self, questions: CallQuestions | None = None) -> Iterator[None]:
        """A request of ours the server is working on: only then may it ask the person anything,
        within its limits (`questions` counts what it asked meanwhile)."""
        whose = self.side.whose()
        self._in_flight.append(whose)
        try:
            with self.questions.call(questions):
                yield
        finally:
            self._in_flight.remove(whose)
            if not self._in_flight:
                self.withdraw()  # its questions ended with it, shown or waiting

    async def _ask(self, request: object) -> Any:
        """The editor's answer; None when nobody answers, the time ran out or it failed.

        A question the server asks while none of our requests is in flight (out of the blue, or
        after the call it belonged to ended) is not put to the person: it could pose as the
        editor asking. Neither is one beyond MAX_WAITING queued behind the open one.
        """
        ask = self.side.ask
        if ask is None:
            return None
        if not self._in_flight:
            self._note("a question asked while no request of ours was in flight was not shown")
            return None
        if self._waiting >= MAX_WAITING:
            self._note(f"a question beyond {MAX_WAITING} waiting ones was not shown")
            return None
        if (why := self.questions.refusal()) is not None:
            if self.questions.declined_in_a_row == 1:  # one line per run: a flood must not fill the log
                self._note(f"questions past a limit are declined without being shown: {why}")
            return UNSHOWN
        self._waiting += 1
        task = asyncio.current_task()
        if task is not None:
            self._open.add(task)  # waiting counts as open: withdrawn with its call
        try:
            async with self._one_at_a_time:
                if not self._in_flight:
                    return None
                return await self._asked(ask, request)
        finally:
            self._waiting -= 1
            self._open.discard(task)

    async def _asked(self, ask: Callable[[object, float], Awaitable[Any]], request: object) -> Any:
        # MCP does not say which request a server's question belongs to: with requests of two clients
        # in flight on one shared connection it could be either's, so it is shown to neither.
        owners = {id(whose): whose for whose in self._in_flight if whose is not None}
        if len(owners) > 1:
            self._note(
                f"a question asked while requests of {len(owners)} clients were in flight was not shown: "
                "it cannot be told whose it is"
            )
            return None
        self.human.begin()
        try:
            with self.side.asking_for(next(iter(owners.values()), None)):
                return await ask(request, ANSWER_TIMEOUT_S)
        except (NoAnswerer, TimeoutError):
            return None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if _says_declined(exc):
                return USER_DECLINED  # the editor's error answer says the person said no
            log.info("server %s: the editor's answer failed: %s", self.server, type(exc).__name__)
            return None
        finally:
            self.human.end()

    def _note(self, text: str) -> None:
        self.log.add(f"[sidecar] {text}")

    # -- elicitation ---------------------------------------------------------------------------

    async def _elicit(self, context: Any, params: Any) -> Any:
        from mcp_types import ElicitResult, ErrorData

        mode = getattr(params, "mode", "form")
        if mode == "url" and self.offer.elicitation_url:
            action, _ = await self.ask_url(params.message, params.url, params.elicitation_id)
            return ElicitResult(action=action)
        if mode != "form" or not self.offer.elicitation_form:
            return ErrorData(code=NOT_SUPPORTED, message=f"Elicitation in {mode} mode is not supported by this client")
        try:
            schema = _redacted_labels(elicitation.checked_schema(params.requested_schema), self.log.redact)
            if self.redaction.value(schema)[1]:
                # Names and values go back to the server as they are: none may carry its secrets.
                raise elicitation.SchemaRefused("a property name or value holds one of the server's secret values")
        except elicitation.SchemaRefused as exc:
            self._note(f"elicitation declined without asking: {exc}")
            return ElicitResult(action="decline")
        except Exception as exc:  # a schema no rule foresaw: declined, never a crash
            self._note(f"elicitation declined without asking: the schema could not be read ({type(exc).__name__})")
            return ElicitResult(action="decline")
        asked: dict[str, Any] = {
            "server": self.server,
            "mode": "form",
            "message": elicitation.message_text(params.message, self.log.redact),
        }
        # `order`: the server's order of the fields, which a client's JSON decoder may lose.
        asked |= {"requestedSchema": schema, "order": list(schema["properties"])}
        answer = await self._ask(ElicitationAsked(self.server, asked))
        action, content = _elicit_answer(answer)
        if answer is UNSHOWN:
            return ElicitResult(action="decline")
        if action != "accept":
            return ElicitResult(action=action)
        problem = elicitation.content_problem(schema, content)
        if problem is not None:
            self._note(f"the editor's answer does not fit the form ({problem.field or 'content'} {problem.reason})")
            return ElicitResult(action="cancel")
        # A null is how an editor leaves an optional field out: the server gets no key for it.
        return ElicitResult(action="accept", content={k: v for k, v in content.items() if v is not None})

    async def ask_url(self, message: str, url: str, elicitation_id: str | None) -> tuple[Action, str | None]:
        """Ask the person to consent to open `url`: the action, and the URL as shown (None: refused).

        The editor gets the URL rebuilt from what was parsed (`elicitation.opened_url`), so the
        host it shows is the host a browser opens; the server's secret values in it are `***`.
        """
        try:
            shown, host = (self.log.redact(part) for part in elicitation.opened_url(url))
            if elicitation_id is not None and (one_line(elicitation_id) != elicitation_id or len(elicitation_id) > 200):
                raise ValueError("the elicitation id holds hidden characters or is too long")
        except ValueError as exc:
            self._note(f"URL elicitation declined without asking: {exc}")
            return "decline", None
        asked: dict[str, Any] = {
            "server": self.server,
            "mode": "url",
            "message": elicitation.message_text(message, self.log.redact),
            "url": shown,
            "host": host,
        }
        if elicitation_id:
            asked["elicitationId"] = elicitation_id
        answer = await self._ask(ElicitationAsked(self.server, asked))
        if answer is UNSHOWN:
            return "decline", None
        action, _ = _elicit_answer(answer)
        if action == "accept" and elicitation_id:
            self.asked_urls.add(elicitation_id)
        return action, shown

    # -- sampling ------------------------------------------------------------------------------

    async def _sample(self, context: Any, params: Any) -> Any:
        from mcp_types import ErrorData

        if not self.offer.sampling:
            return ErrorData(code=NOT_SUPPORTED, message="Sampling is not supported by this client")
        asked = _sampling_params(params.model_dump(by_alias=True, mode="json", exclude_none=True), self.log.redact)
        if len(json.dumps(asked, ensure_ascii=False)) > MAX_SAMPLING_CHARS:
            self._note(f"a sampling request over {MAX_SAMPLING_CHARS} characters was not shown")
            return ErrorData(code=DECLINED, message="The request is too large for a person to review")
        answer = await self._ask(SamplingAsked(self.server, asked | {"server": self.server}))
        if answer is USER_DECLINED:
            return ErrorData(code=DECLINED, message=DECLINED_MESSAGE)
        if answer is UNSHOWN:
            return ErrorData(code=DECLINED, message="Declined without asking the user: too many requests")
        result = _sampling_result(answer, tools=bool(asked.get("tools"))) if answer is not None else None
        if result is None:
            if answer is not None:
                self._note("the editor's sampling answer is not an MCP CreateMessageResult")
            return ErrorData(code=EDITOR_FAILED, message="The editor could not answer")
        return result

    # -- roots and logging ---------------------------------------------------------------------

    async def _roots(self, context: Any) -> Any:
        from mcp_types import ListRootsResult, Root

        return ListRootsResult(roots=[Root(uri=uri, name=name) for uri, name in self.side.roots()])  # type: ignore[arg-type]

    async def _logged(self, params: Any) -> None:
        level = str(getattr(params, "level", "info"))
        if _rank(level) < _rank(self.log_level):
            return  # below what was asked for (a handshake-era server sends every level)
        logger = getattr(params, "logger", None)
        data = getattr(params, "data", None)
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        text = self.log.redact(one_line(text))[:LOG_TEXT_CHARS]
        name = self.log.redact(one_line(logger))[:200] if isinstance(logger, str) else None
        self.log.add(f"[{level}] {name}: {text}" if name else f"[{level}] {text}")
        self.on_log(level, name, text, _rank(level) >= _rank(NOTIFIED_LEVEL) and self._within_budget())

    def _within_budget(self) -> bool:
        now = time.monotonic()
        if now - self._budget.window >= 1.0:
            self._budget.window, self._budget.sent = now, 0
        self._budget.sent += 1
        return self._budget.sent <= LOGS_PER_SECOND


def offering_client(hooks: ClientHooks, transport: Any, **kwargs: Any) -> Any:
    """An SDK `Client` whose capabilities name only the elicitation modes the editor offered.

    The SDK advertises both form and URL mode whenever an elicitation callback is set; an editor
    that renders forms only must not be asked for URLs, so the session's capability ad is
    narrowed as it is built (`sdk_shim.announcing_client`; pinned by
    tests/e2e/test_client_capabilities.py).
    """
    from mcp_sidecar.connections.sdk_shim import announcing_client

    def narrowed(capabilities: Any) -> Any:
        if capabilities.elicitation is None:
            return capabilities
        return capabilities.model_copy(update={"elicitation": hooks.elicitation_capability()})

    return announcing_client(transport, narrowed, **kwargs, **hooks.kwargs())


def _says_declined(exc: Exception) -> bool:
    """The editor's error answer for a person who said no: MCP's -1, or (from a client whose
    JSON-RPC layer sends LSP's codes only, such as Neovim's) RequestFailed with that message."""
    code, message = getattr(exc, "code", None), getattr(exc, "message", None)
    return code == DECLINED or (code == LSP_REQUEST_FAILED and message == DECLINED_MESSAGE)


def _rank(level: str) -> int:
    return LEVELS.index(level) if level in LEVELS else 0


def _elicit_answer(answer: Any) -> tuple[Action, Any]:
    """The editor's `{action, content?}`; an error answer saying the person said no is `decline`, else `cancel`."""
    if answer is USER_DECLINED:
        return "decline", None
    if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
        return "cancel", None
    action: Action = answer["action"]
    return action, answer.get("content")


def _clean_strings(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(strip_controls(value))
    if isinstance(value, list):
        return [_clean_strings(v, redact) for v in value]
    if isinstance(value, dict):
        return {k: _clean_strings(v, redact) for k, v in value.items()}
    return value


def _redacted_labels(schema: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """Titles and descriptions without the server's secret values (values stay as sent)."""
    for prop in schema["properties"].values():
        for key in ("title", "description"):
            if key in prop:
                prop[key] = redact(prop[key])
        for option in prop.get("oneOf", []) + prop.get("items", {}).get("anyOf", []):
            option["title"] = redact(option["title"])
    return schema


def _sampling_params(dumped: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """MCP's CreateMessageRequest params as the editor gets them: server text sanitised, no `task`/`_meta`."""
    keep = ("messages", "maxTokens", "systemPrompt", "modelPreferences", "temperature", "stopSequences", "tools")
    out = {key: _clean_strings(dumped[key], redact) for key in keep if key in dumped}
    if "toolChoice" in dumped:
        out["toolChoice"] = dumped["toolChoice"]
    return out


def _sampling_result(answer: Any, tools: bool) -> Any:
    import pydantic
    from mcp_types import CreateMessageResult, CreateMessageResultWithTools

    if not isinstance(answer, dict) or answer.get("role") != "assistant":
        return None
    shape = {k: answer[k] for k in ("role", "content", "model", "stopReason") if k in answer}
    try:
        if tools or isinstance(shape.get("content"), list):
            return CreateMessageResultWithTools.model_validate(shape)
        return CreateMessageResult.model_validate(shape)
    except pydantic.ValidationError:
        return None


__all__ = [
    "ANSWER_TIMEOUT_S",
    "ClientHooks",
    "ClientOffer",
    "ClientSide",
    "HumanTime",
    "offering_client",
]
