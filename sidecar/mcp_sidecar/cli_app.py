"""`mcp-sidecar app SERVER URI`: one server's MCP App in the browser, served until the end of input.

The run declares MCP Apps to its servers, opens the app's loopback page (`services/app_pages.py`,
as `mcp/app/open` does for an editor), prints its address on stdout and opens it in the browser
(unless `--no-browser`). Each tool call the app makes is asked on the terminal (stderr, then a
line of stdin: `y` allows it, anything else refuses it). It serves until stdin ends (Ctrl-D) or
Ctrl-C; then the page is gone. It runs in its own process, never in the engine: it talks to the
terminal, and its page lives only as long as it does.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mcp_sidecar.output.sanitize import json_text, one_line

if TYPE_CHECKING:
    import argparse

    from mcp_sidecar.events import AppCallAsked

EXIT_FAILED = 1


def add_parser(sub: Any) -> None:
    app = sub.add_parser(
        "app", help="show a server's MCP App in the browser until the end of input: app SERVER URI [--no-browser]"
    )
    app.add_argument("server")
    app.add_argument("uri", help="the app's ui:// URI, as the server's tools name it (`tools SERVER --json`)")
    app.add_argument("--no-browser", action="store_true", help="only print the page's address")


class Lines:
    """Stdin's lines, read on a thread of their own: the answers to the calls' questions, and its end."""

    def __init__(self, stdin: TextIO) -> None:
        self._loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.ended = asyncio.Event()
        threading.Thread(target=self._read, args=(stdin,), name="app-stdin", daemon=True).start()

    def _read(self, stdin: TextIO) -> None:
        for line in stdin:
            self._loop.call_soon_threadsafe(self.queue.put_nowait, line)
        self._loop.call_soon_threadsafe(self._end)

    def _end(self) -> None:
        self.queue.put_nowait(None)
        self.ended.set()

    async def answer(self) -> str | None:
        """The next line typed (None: input ended), what was typed before the question aside."""
        while not self.queue.empty():
            if self.queue.get_nowait() is None:
                return None
        return await self.queue.get()


def confirmer(lines: Lines, err: TextIO) -> Any:
    async def confirm(request: AppCallAsked) -> dict[str, bool]:
        params = request.params
        arguments = json_text(params.get("arguments", {}))
        print(
            f"\nThe app {one_line(str(params['uri']))} of {one_line(request.server)} calls the tool "
            f"{one_line(str(params['name']))} with {one_line(arguments)[:500]}. Allow? [y/N] ",
            end="",
            file=err,
            flush=True,
        )
        typed = await lines.answer()
        allow = typed is not None and typed.strip().lower() in ("y", "yes")
        print("allowed" if allow else "refused", file=err, flush=True)
        return {"allow": allow}

    return confirm


async def show_app(args: argparse.Namespace, project: Path) -> int:
    from mcp_sidecar.connections.client_hooks import ClientOffer
    from mcp_sidecar.events import AppCallAsked
    from mcp_sidecar.protocol.errors import SidecarError
    from mcp_sidecar.services.app import Sidecar

    app = Sidecar.headless(project, args.trust_project)
    app.ensure_loaded()
    app.offers.current = ClientOffer(apps=True)
    lines = Lines(sys.stdin)
    app.hub.answer(AppCallAsked, confirmer(lines, sys.stderr))
    try:
        try:
            opened = await app.app_pages.open(args.server, args.uri, None, None)
        except SidecarError as exc:
            print(one_line(exc.diagnostic.render()), file=sys.stderr)
            return EXIT_FAILED
        print(opened["url"], flush=True)
        if not args.no_browser:
            await asyncio.to_thread(webbrowser.open, opened["url"])
        print("Serving the app until the end of input (Ctrl-D) or Ctrl-C.", file=sys.stderr, flush=True)
        await lines.ended.wait()
        return 0
    finally:
        await app.shutdown()
