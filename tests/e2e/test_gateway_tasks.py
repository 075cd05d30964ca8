"""The gateway's tasks for 2026-07-28 hosts (the `io.modelcontextprotocol/tasks` extension, SEP-2663).

A host that names the extension in its requests gets a task of the gateway's when the upstream
server made a task of the call (the 2026-07-28 fixture `tasks_ext.py`, or the handshake-era
`tasks.py`), and follows it with `tasks/get` and `tasks/cancel`; any other call, and any call of a
host that does not name the extension, is answered as ever. The host is the SDK's `Client` over
stdio, declaring the extension with a claim on `resultType: "task"` and driving the task by hand.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any, Literal

import mcp_types as types
import pytest
from mcp import Client, MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from support.discovery import read_lines
from support.gateway import Changes, gateway, text_of
from support.servers import fixture_path
from support.sidecar import wait_until, write_config

EXTENSION = "io.modelcontextprotocol/tasks"


class CreatedTask(types.Result):
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskIdParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


async def _unused(created: CreatedTask, context: ClaimContext) -> types.CallToolResult:
    raise AssertionError("the tests take the task themselves (allow_claimed)")


class Follows(ClientExtension):
    identifier = EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        versions = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=_unused, protocol_versions=versions)]


def stdio(script: str, *args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(fixture_path(script)), *args]}


async def activated(host: Client, changes: Changes, *ids: str) -> None:
    before = changes.count
    result = await host.call_tool("mcp_tools", {"activate": list(ids)})
    assert not result.is_error, text_of(result)
    await changes.next(before)


async def get(host: Client, task_id: str) -> DetailedTask:
    return await host.session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), DetailedTask)


async def follow(host: Client, task_id: str) -> list[DetailedTask]:
    """`tasks/get` at the gateway's pace until the task ends: every answer."""
    seen = [await get(host, task_id)]
    async with asyncio.timeout(60):
        while seen[-1].status not in ("completed", "failed", "cancelled"):
            await asyncio.sleep((seen[-1].poll_interval_ms or 1000) / 1000)
            seen.append(await get(host, task_id))
    return seen


async def call_claimed(host: Client, name: str, arguments: dict[str, Any]) -> Any:
    return await host.session.call_tool(name, arguments, allow_claimed=True)


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    path = tmp_path / "logs"
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path, logs: Path) -> Path:
    home = tmp_path / "home"
    servers = {
        "slow": stdio("tasks_ext.py", "--log-file", str(logs / "slow")),
        "old": stdio("tasks.py", "--log-file", str(logs / "old")),
    }
    write_config(home, servers)
    return home


async def test_a_call_the_server_makes_a_task_of_is_a_task_the_host_follows(home: Path, logs: Path) -> None:
    async with gateway(home, legacy=False, extensions=[Follows()]) as (host, changes):
        assert host.server_capabilities is not None
        assert host.server_capabilities.extensions == {EXTENSION: {}}
        await activated(host, changes, "slow.research", "slow.quick")
        created = await call_claimed(host, "slow__research", {"steps": 10})
        assert isinstance(created, CreatedTask), created
        seen = await follow(host, created.task_id)
        quick = await call_claimed(host, "slow__quick", {})
    assert (created.status, created.poll_interval_ms) == ("working", 1000)
    assert len(created.task_id) >= 32  # unguessable: it is the only key
    *working, end = seen
    assert {task.status for task in working} == {"working"}
    # The upstream task's status messages, read by the host's polls, in order.
    steps = [
        int(m.group(1)) for t in working if t.status_message and (m := re.match(r"step (\d+) of 10", t.status_message))
    ]
    assert steps, [t.status_message for t in working]
    assert steps == sorted(steps), [t.status_message for t in working]
    assert end.status == "completed"
    assert types.CallToolResult.model_validate(end.result).content[0].text == "researched in 10 steps"  # type: ignore[union-attr]
    # A call the server answers directly is answered directly.
    assert isinstance(quick, types.CallToolResult)
    assert text_of(quick) == "ran directly"
    heads = [" ".join(line.split()[:2]) for line in read_lines(logs / "slow")]
    assert (heads[0], heads[-1]) == ("call research", "call quick")
    assert heads.count("get task-1") == 11  # followed upstream once, by the sidecar


async def test_a_hosts_tasks_cancel_cancels_the_upstream_task(home: Path, logs: Path) -> None:
    async with gateway(home, legacy=False, extensions=[Follows()]) as (host, changes):
        await activated(host, changes, "slow.forever")
        created = await call_claimed(host, "slow__forever", {})
        assert isinstance(created, CreatedTask), created
        await host.session.send_request(CancelTask(params=TaskIdParams(task_id=created.task_id)), types.EmptyResult)
        after = await get(host, created.task_id)
        await wait_until(
            lambda: read_lines(logs / "slow")[-1:] == ["cancel task-1 working"], what="tasks/cancel upstream"
        )
        with pytest.raises(MCPError, match="Task not found"):
            await get(host, "no-such-task")
    assert after.status == "cancelled"
    assert after.result is None


async def test_a_handshake_era_servers_task_is_a_task_for_the_host_too(home: Path, logs: Path) -> None:
    async with gateway(home, legacy=False, extensions=[Follows()]) as (host, changes):
        await activated(host, changes, "old.research")
        created = await call_claimed(host, "old__research", {"steps": 2})
        assert isinstance(created, CreatedTask), created
        seen = await follow(host, created.task_id)
    assert seen[-1].status == "completed"
    assert types.CallToolResult.model_validate(seen[-1].result).content[0].text == "researched in 2 steps"  # type: ignore[union-attr]
    assert read_lines(logs / "old")[0] == "call research task=yes ttl=30000"


async def test_a_host_that_does_not_follow_tasks_gets_the_result(home: Path, logs: Path) -> None:
    async with gateway(home, legacy=False) as (host, changes):
        assert host.server_capabilities is not None
        await activated(host, changes, "slow.research")
        result = await host.call_tool("slow__research", {"steps": 2})
    assert text_of(result) == "researched in 2 steps"
    # The sidecar followed the upstream task itself: it declares the extension whoever its host.
    assert read_lines(logs / "slow")[0] == "call research ext=yes"


async def test_a_handshake_era_host_is_not_offered_the_extension(home: Path) -> None:
    async with gateway(home) as (host, _):
        assert host.server_capabilities is not None
        assert host.server_capabilities.extensions is None
        with pytest.raises(MCPError, match="Method not found"):
            await get(host, "any")
