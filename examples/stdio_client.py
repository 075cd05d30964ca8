"""Drive mcp-sidecar over its stdio JSON-RPC protocol with nothing but the standard library.

    python examples/stdio_client.py [path/to/mcp-sidecar]

It starts the sidecar, initializes, lists server status, discovers and activates a tool of the demo
server, calls it, prints every notification it receives, then shuts down. Copy it as the
start of your own script; docs/scripting.md explains each message.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO


class Sidecar:
    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        stream: BinaryIO = self.proc.stdout  # type: ignore[assignment]
        length = 0
        while (line := stream.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        if not length:
            raise EOFError("the sidecar closed its output")
        message: dict[str, Any] = json.loads(stream.read(length))
        return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"]["message"])
                return message["result"]
            if "method" in message:  # a notification (or a request we do not serve)
                print(f"  ← {message['method']}: {json.dumps(message.get('params'))[:100]}")

    def close(self) -> int:
        self.request("shutdown")
        self.send({"jsonrpc": "2.0", "method": "exit"})
        return self.proc.wait(timeout=30)


def main() -> int:
    default = Path(sys.executable).with_name("mcp-sidecar")
    command = [sys.argv[1]] if len(sys.argv) > 1 else [str(default) if default.exists() else "mcp-sidecar"]
    if shutil.which(command[0]) is None and not Path(command[0]).exists():
        print(f"cannot find {command[0]}", file=sys.stderr)
        return 1
    sidecar = Sidecar(command)
    init = sidecar.request(
        "initialize",
        {
            "processId": None,
            "rootUri": Path.cwd().as_uri(),
            "capabilities": {},
            "initializationOptions": {"trustedWorkspace": False, "interactive": False},
        },
    )
    sidecar.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    print(f"→ initialize: {init['serverInfo']['name']} {init['serverInfo']['version']}")
    status = sidecar.request("mcp/status")
    print(f"→ mcp/status: {[(s['name'], s['state']) for s in status['servers']]}")
    if not any(s["name"] == "demo" for s in status["servers"]):
        print("no demo server (a configuration exists); stopping here")
        return sidecar.close()
    found = sidecar.request("mcp/discover", {"query": "count words", "kind": "tools"})
    print("→ mcp/discover:", [c["id"] for c in found["candidates"]])
    activated = sidecar.request("mcp/activate", {"ids": [found["candidates"][0]["id"]]})
    print("→ mcp/activate:", [(r["id"], r["status"]) for r in activated["results"]])
    result = sidecar.request("mcp/callTool", {"id": "demo.count_words", "arguments": {"text": "one two three\nfour"}})
    print("→ mcp/callTool:", json.dumps(result.get("structuredContent") or result["content"]))
    code = sidecar.close()
    print(f"→ exit code {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
