"""Helpers for the reliability suite: a blocking raw JSON-RPC client (hypothesis drives it from
plain functions), process memory, and the figures the suite reports in `docs/reliability.md`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

FIGURES: list[tuple[str, str]] = []
"""(scenario, figure) lines, printed in pytest's terminal summary (see conftest.py)."""


def figure(scenario: str, text: str) -> None:
    FIGURES.append((scenario, text))


def rss_kib(pid: int) -> int:
    """Resident set size of a live process (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f} MiB"


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class BlockingClient:
    """`python -m mcp_sidecar` on pipes; a thread parses stdout strictly into JSON-RPC messages.

    Anything on stdout that is not a well-formed LSP frame with a JSON-RPC 2.0 object is
    recorded in `violations`.
    """

    def __init__(self, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.home = home
        self._stderr = (home / "sidecar.stderr").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_sidecar", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, "MCP_SIDECAR_HOME": str(home), **(env or {})},
            cwd=home,
        )
        self.messages: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.stdout_bytes = 0
        self._cond = threading.Condition()
        self._next_id = 1_000_000_000
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stdout = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stdout.read(1)
                if not byte:
                    if header:
                        self._violation(f"trailing bytes: {header[:200]!r}")
                    with self._cond:
                        self._cond.notify_all()
                    return
                header += byte
            lines = header[:-4].split(b"\r\n")
            lengths = [line[16:] for line in lines if line.startswith(b"Content-Length: ")]
            if len(lengths) != 1 or not lengths[0].isdigit():
                self._violation(f"not an LSP header: {header[:200]!r}")
                return
            body = stdout.read(int(lengths[0]))
            self.stdout_bytes += len(header) + len(body)
            try:
                message = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                self._violation(f"not UTF-8 JSON: {body[:200]!r}")
                return
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self._violation(f"not JSON-RPC 2.0: {body[:200]!r}")
                return
            with self._cond:
                self.messages.append(message)
                self._cond.notify_all()

    def _violation(self, text: str) -> None:
        with self._cond:
            self.violations.append(text)
            self._cond.notify_all()

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(frame(json.dumps(message).encode()))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def wait_response(self, msg_id: Any, timeout: float = 30) -> dict[str, Any]:
        """Wait (bounded) for the response with this id and take it out of `messages`."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                assert not self.violations, self.violations
                for message in self.messages:
                    if "method" not in message and message.get("id") == msg_id:
                        self.messages.remove(message)
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.proc.poll() is not None:
                    code = self.proc.poll()
                    raise AssertionError(f"no response to id {msg_id!r} (exit {code}); last {self.messages[-5:]!r}")
                self._cond.wait(min(remaining, 0.5))

    def request(self, method: str, params: Any = None, timeout: float = 30) -> dict[str, Any]:
        msg_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_response(msg_id, timeout)

    def take_all(self) -> list[dict[str, Any]]:
        with self._cond:
            taken, self.messages = self.messages, []
            return taken

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        self._reader.join(timeout=10)
        self._stderr.close()
