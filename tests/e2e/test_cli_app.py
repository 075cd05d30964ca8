"""`mcp-sidecar app SERVER URI`: the official clock app (`server-basic-vanillajs`) served until the end
of input, each call the page sends asked on the terminal (here: pipes), the page gone at the end."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from support.servers import APP_SERVERS
from support.sidecar import write_config

SERVER = APP_SERVERS / "server-basic-vanillajs" / "dist" / "index.js"
URI = "ui://get-time/mcp-app.html"
QUESTION = b"Allow? [y/N] "
pytestmark = pytest.mark.skipif(not SERVER.is_file(), reason="run `cd tests && npm ci` to install the app servers")


def _post_call(url: str) -> tuple[int, dict[str, object]]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        body = json.dumps({"name": "get-time", "arguments": {}})
        headers = {"Content-Type": "application/json", "Origin": f"http://{parts.netloc}"}
        conn.request("POST", parts.path + "call", body=body, headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


async def _until(stream: asyncio.StreamReader, marker: bytes, seen: bytearray) -> None:
    while marker not in seen:
        chunk = await stream.read(4096)
        assert chunk, f"stderr ended before {marker!r}: {seen.decode(errors='replace')}"
        seen.extend(chunk)


async def test_the_cli_serves_an_app_and_asks_before_each_call(home: Path, tmp_path: Path) -> None:
    write_config(home, {"clock": {"command": "node", "args": [str(SERVER), "--stdio"]}})
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcp_sidecar",
        "app",
        "clock",
        URI,
        "--no-browser",
        "--project",
        str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "MCP_SIDECAR_HOME": str(home)},
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        url = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode().strip()
        assert url.startswith("http://127.0.0.1:")
        seen = bytearray()
        allowed = asyncio.create_task(asyncio.to_thread(_post_call, url))
        await asyncio.wait_for(_until(proc.stderr, QUESTION, seen), 60)
        assert b"The app ui://get-time/mcp-app.html of clock calls the tool get-time with {}." in seen
        proc.stdin.write(b"y\n")
        status, answer = await asyncio.wait_for(allowed, 60)
        del seen[:]
        refused = asyncio.create_task(asyncio.to_thread(_post_call, url))
        await asyncio.wait_for(_until(proc.stderr, QUESTION, seen), 60)
        proc.stdin.write(b"n\n")
        refused_status, refused_answer = await asyncio.wait_for(refused, 60)
        proc.stdin.close()
        code = await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert code == 0
    assert status == 200
    result = answer["result"]
    assert isinstance(result, dict)
    assert result["isError"] is False
    assert str(result["structuredContent"]["time"]) >= "2000"
    assert refused_status == 200
    assert "was not allowed" in str(refused_answer["error"])
    with pytest.raises(ConnectionRefusedError):  # the page ended with the run
        await asyncio.to_thread(_post_call, url)
