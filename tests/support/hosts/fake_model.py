"""A scripted model on 127.0.0.1 that speaks the Anthropic, OpenAI Responses and Gemini APIs.

Each conversation request (one that offers tools) takes the script's next turn and is answered
streamed, as the host asked; the host's side requests (token counts, model lists, checks without
tools) get a plain answer that lets it go on and take no turn. Every request is recorded, in
order, one JSON object a line (`{"t", "api", "method", "path", "body", "turn", "answer"}`), so a
test reads exactly what the host offered the model each time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from support.hosts import anthropic, gemini, responses
from support.hosts.dialect import Dialect, once
from support.hosts.script import Cursor, Decision, Turn

DIALECTS: dict[str, Dialect] = {
    "anthropic": anthropic.Anthropic(),
    "responses": responses.Responses(),
    "gemini": gemini.Gemini(),
}


class Model:
    """The script's cursor and the record of every request."""

    def __init__(self, turns: list[Turn], record: Path) -> None:
        self.cursor = Cursor(turns)
        self.turns = 0
        self.requests = 0
        self._record = record.open("a", encoding="utf-8")

    def take(self, api: str, body: dict[str, Any]) -> tuple[int, Decision]:
        """The next turn's answer to a conversation request, and the request's number among them."""
        dialect = DIALECTS[api]
        offered = [tool.name for tool in dialect.offered(body)]
        self.turns += 1
        return self.turns, self.cursor.next(offered, offered + dialect.announced(body))

    def record(self, api: str, request: Request, body: Any, turn: int | None, answer: Any) -> int:
        self.requests += 1
        entry = {
            "t": round(time.time(), 6),
            "api": api,
            "method": request.method,
            "path": request.url.path,
            "query": request.url.query,
            "body": body,
            "turn": turn,
            "answer": answer,
        }
        self._record.write(json.dumps(entry) + "\n")
        self._record.flush()
        return self.requests


def _answer(decision: Decision) -> dict[str, Any]:
    if decision.kind == "call":
        return {"call": decision.tool, "arguments": decision.arguments}
    return {"say": decision.text}


def _streamed(payload: bytes) -> StreamingResponse:
    return StreamingResponse(once(payload), media_type="text/event-stream", headers={"cache-control": "no-cache"})


async def _body(request: Request) -> Any:
    raw = await request.body()
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return {"undecoded": raw[:2000].decode("utf-8", "replace")}


class Routes:
    """The HTTP face of a `Model`: one method per endpoint of the three APIs."""

    def __init__(self, model: Model) -> None:
        self.model = model

    async def messages(self, request: Request) -> Response:
        """Anthropic `POST /v1/messages`: a conversation turn when it offers tools."""
        body = await _body(request)
        if isinstance(body, dict) and body.get("tools"):
            turn, decision = self.model.take("anthropic", body)
        else:
            turn, decision = None, Decision("say", text="OK")
        number = self.model.record("anthropic", request, body, turn, _answer(decision))
        if isinstance(body, dict) and body.get("stream"):
            return _streamed(anthropic.stream(decision, number))
        return JSONResponse(anthropic.message(decision, number))

    async def count_tokens(self, request: Request) -> Response:
        self.model.record("anthropic", request, await _body(request), None, {"input_tokens": 100})
        return JSONResponse({"input_tokens": 100})

    async def responses(self, request: Request) -> Response:
        """OpenAI `POST /v1/responses`: every request is a conversation turn."""
        body = await _body(request)
        if not isinstance(body, dict):
            self.model.record("responses", request, body, None, "400")
            return JSONResponse({"error": {"message": "not JSON"}}, status_code=400)
        turn, decision = self.model.take("responses", body)
        number = self.model.record("responses", request, body, turn, _answer(decision))
        return _streamed(responses.stream(decision, number, responses.Responses().namespaces(body)))

    async def generate(self, request: Request) -> Response:
        """Gemini `POST /v1beta/models/MODEL:ACTION`: a streamed request with tools is a turn."""
        body = await _body(request)
        action = str(request.path_params["action"])
        if action.endswith(":countTokens"):
            self.model.record("gemini", request, body, None, {"totalTokens": 100})
            return JSONResponse({"totalTokens": 100})
        streamed = action.endswith(":streamGenerateContent")
        if isinstance(body, dict) and body.get("tools") and streamed:
            turn, decision = self.model.take("gemini", body)
        else:
            turn, decision = None, Decision("say", text=_side_text(body))
        self.model.record("gemini", request, body, turn, _answer(decision))
        return _streamed(gemini.stream(decision)) if streamed else JSONResponse(gemini.response(decision))

    async def other(self, request: Request) -> Response:
        self.model.record("other", request, await _body(request), None, "404")
        return JSONResponse({"error": {"message": "not served by the fake model"}}, status_code=404)


def app(model: Model) -> Starlette:
    routes = Routes(model)
    return Starlette(
        routes=[
            Route("/v1/messages", routes.messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", routes.count_tokens, methods=["POST"]),
            Route("/v1/responses", routes.responses, methods=["POST"]),
            Route("/v1beta/models/{action:path}", routes.generate, methods=["POST"]),
            Route("/{rest:path}", routes.other, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
        ]
    )


def _side_text(body: Any) -> str:
    """A side request that asks for JSON (Gemini CLI's router and checks) gets the smallest value of
    its schema; any other gets a short text."""
    answer = gemini.json_answer(body)
    return answer if answer is not None else "OK"


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """The driver handles signals itself."""
        yield


@asynccontextmanager
async def serve(model: Model) -> AsyncIterator[int]:
    """The fake model on 127.0.0.1 at a free port, which is yielded; it listens before the yield
    (connections wait in the backlog until the server accepts them)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = _Server(uvicorn.Config(app(model), log_level="warning", lifespan="off", access_log=False))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield int(sock.getsockname()[1])
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)
        sock.close()
