"""What the sidecar's log keeps of other libraries' records: their templates, never their arguments."""

from __future__ import annotations

import logging
from pathlib import Path

from mcp_sidecar.logs import ForeignRecordScrubber


def _scrubbed(name: str, msg: str, *args: object) -> str:
    record = logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args or None, None)
    assert ForeignRecordScrubber().filter(record)
    return record.getMessage()


def test_a_foreign_template_shows_each_argument_as_withheld() -> None:
    line = _scrubbed("mcp.server.runner", "handler for %r returned an invalid result", "tools/list")
    assert line == "handler for <withheld> returned an invalid result"


def test_a_template_that_does_not_take_strings_says_its_arguments_were_withheld() -> None:
    assert _scrubbed("httpx", "%d bytes from %s", 12, "secret-host") == "%d bytes from %s [arguments withheld]"


def test_a_mapping_argument_is_withheld_too() -> None:
    record = logging.LogRecord("httpx", logging.ERROR, __file__, 1, "%(body)s", ({"body": "token"},), None)
    assert ForeignRecordScrubber().filter(record)
    assert "token" not in record.getMessage()


def test_the_sidecars_own_records_keep_their_arguments() -> None:
    assert _scrubbed("mcp_sidecar.gateway", "server %s", "basic") == "server basic"


async def test_each_client_served_by_one_process_gets_the_records_made_for_it(tmp_path: Path) -> None:
    """The engine's clients: records made while serving one (its tasks and threads) reach its own
    file and stream at its own level; another client's and the process's own do not."""
    import asyncio

    from mcp_sidecar import logs

    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    log = logging.getLogger("mcp_sidecar.test_clients")
    try:
        logs.route_clients()
        streams: dict[str, list[str]] = {"a": [], "b": []}
        quiet = logs.ClientLog(0, tmp_path / "a.log", streams["a"].append)
        chatty = logs.ClientLog(2, tmp_path / "b.log", streams["b"].append)

        async def serve(client: logs.ClientLog, name: str, started: asyncio.Event, done: asyncio.Event) -> None:
            with client.serving():
                started.set()
                await done.wait()
                log.debug("debug for %s", name)
                log.warning("warning for %s", name)
                await asyncio.to_thread(log.warning, "thread for %s", name)

        events = [asyncio.Event() for _ in range(3)]
        tasks = [
            asyncio.create_task(serve(quiet, "a", events[0], events[2])),
            asyncio.create_task(serve(chatty, "b", events[1], events[2])),
        ]
        await events[0].wait()
        await events[1].wait()
        log.warning("the engine's own")
        events[2].set()
        await asyncio.gather(*tasks)
        log.warning("after both")
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]

    assert [line.split(": ", 1)[1] for line in streams["a"]] == ["warning for a\n", "thread for a\n"]
    assert [line.split(": ", 1)[1] for line in streams["b"]] == [
        "debug for b\n",
        "warning for b\n",
        "thread for b\n",
    ]
    a_file = (tmp_path / "a.log").read_text()
    assert "warning for a" in a_file
    assert "debug for a" not in a_file
    assert " b" not in a_file
    assert "engine's own" not in a_file + (tmp_path / "b.log").read_text()
    assert "debug for b" in (tmp_path / "b.log").read_text()
