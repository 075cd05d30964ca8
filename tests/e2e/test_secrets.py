"""A canary secret in `env` and `headers` never leaves the sidecar: not in a response, an error,
a notification, a server log view or the sidecar's own log file."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from support.servers import basic_stdio, fixture_stdio, free_port, http_server
from support.sidecar import SidecarClient, start_sidecar, write_config

CANARY = "CANARY-7f3a9c"


class Transcript:
    """Everything the sidecar answered, as text."""

    def __init__(self, sidecar: SidecarClient) -> None:
        self.sidecar = sidecar
        self.texts: list[str] = []

    async def ok(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = await self.sidecar.request(method, params, timeout=30)
        self.texts.append(json.dumps(result))
        return result

    async def error(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        error = await self.sidecar.error(method, params, timeout=30)
        self.texts.append(f"{error} {error.code} {json.dumps(error.data)}")
        assert isinstance(error.data, dict)
        return error.data

    async def either(self, request: Awaitable[Any]) -> None:
        try:
            self.texts.append(json.dumps(await request))
        except JsonRpcException as exc:
            self.texts.append(f"{exc} {json.dumps(exc.data)}")

    def assert_clean(self) -> None:
        notifications = json.dumps(self.sidecar.notifications)
        assert self.texts
        for text in [*self.texts, notifications]:
            assert CANARY not in text, text
        log = self.sidecar.log_text()
        assert log, "the sidecar wrote no log at all"
        assert CANARY not in log


async def test_canary_never_appears_anywhere(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with http_server("basic.py") as url:
        write_config(
            home,
            {
                "env-var": basic_stdio(
                    "--stderr-line",
                    "var: starting",
                    env={"API_TOKEN": "${SIDECAR_TEST_CANARY}", "OTHER": "prefix-$SIDECAR_TEST_CANARY"},
                ),
                # This one prints the secret itself (from its args); the log view must redact it.
                "env-direct": basic_stdio("--stderr-line", "token is ${SIDECAR_TEST_CANARY}", env={"T": CANARY}),
                "web": {"url": url, "headers": {"Authorization": f"Bearer {CANARY}", "X-Api-Key": CANARY}},
                "crashes": fixture_stdio("crash_on_start.py", env={"API_TOKEN": CANARY}),
                "hangs": fixture_stdio("hang.py", env={"API_TOKEN": CANARY}, timeoutMs=1000),
                "refused": {
                    "url": f"http://127.0.0.1:{free_port()}/mcp",
                    "headers": {"Authorization": f"Bearer {CANARY}"},
                    "timeoutMs": 2000,
                },
                "missing-var": basic_stdio(env={"A": CANARY, "B": "${SIDECAR_TEST_UNSET}"}),
            },
        )
        async with start_sidecar(home, project=project, trusted=True, env={"SIDECAR_TEST_CANARY": CANARY}) as sidecar:
            t = Transcript(sidecar)
            healthy = ["env-direct", "env-var", "web"]
            await t.ok("mcp/status")
            # Concurrently: each server start costs seconds of CPU.
            listings = await asyncio.gather(*(t.ok("mcp/server/tools", {"server": s}) for s in healthy))
            assert [len(listing["tools"]) for listing in listings] == [8] * len(healthy)
            for server in healthy:
                await t.ok("mcp/server/get", {"server": server})
            ids = [f"{server}.{tool}" for server in healthy for tool in ("echo", "add")]
            activated = await t.ok("mcp/activate", {"ids": ids})
            assert {r["status"] for r in activated["results"]} == {"loaded"}
            await t.ok("mcp/activeTools")
            for server in healthy:
                result = await t.ok("mcp/callTool", {"id": f"{server}.echo", "arguments": {"text": "plain"}})
                assert result["content"][0]["text"] == "plain"
            await t.ok("mcp/server/reconnect", {"server": "env-var"})
            await t.ok("mcp/server/reconnect", {"server": "web"})

            failing = {
                "crashes": "connection_failed",
                "hangs": "timeout",
                "refused": "connection_failed",
                "missing-var": "configuration_invalid",
            }
            errors = await asyncio.gather(*(t.error("mcp/server/tools", {"server": s}) for s in failing))
            assert [e["code"] for e in errors] == list(failing.values())
            for server in failing:
                await t.ok("mcp/server/get", {"server": server})
                await t.either(sidecar.request("mcp/activate", {"ids": [f"{server}.echo"]}))

            logs = {name: await t.ok("mcp/server/logs", {"server": name}) for name in [*healthy, "crashes"]}
            assert "var: starting" in [line["text"] for line in logs["env-var"]["lines"]]
            assert "token is ***" in [line["text"] for line in logs["env-direct"]["lines"]]
            assert "fatal: startup failed" in [line["text"] for line in logs["crashes"]["lines"]]

            status = await t.ok("mcp/status")
            states = {row["name"]: row["state"] for row in status["servers"]}
            assert {states[name] for name in healthy} == {"connected"}
            t.assert_clean()
    # Shutdown logging too.
    t.assert_clean()
