"""Headless OAuth: `login`, `logout` and `conformance-client`.

`conformance-client URL` is the client the MCP conformance suite drives (it appends the URL
of its mock server and sets MCP_CONFORMANCE_SCENARIO / MCP_CONFORMANCE_CONTEXT). It uses the
sidecar's own configuration loading, connection, login and diagnostics, with two stand-ins:
an in-memory credential store (the suite's runs are throwaway) and a "browser" that follows
the authorization URL without redirects and delivers the redirect to the real loopback
listener, as a person's browser would.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_sidecar.output.sanitize import json_text, one_line, strip_controls
from mcp_sidecar.protocol.errors import SidecarError

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import LoginResult, LogoutResult


def add_parsers(sub: Any) -> None:
    login = sub.add_parser("login", help="OAuth login for an HTTP server: login SERVER [--no-browser]")
    login.add_argument("server")
    login.add_argument("--no-browser", action="store_true", help="print the URL and read the pasted callback address")
    logout = sub.add_parser("logout", help="remove a server's stored OAuth credentials and revoke them")
    logout.add_argument("server")
    conformance = sub.add_parser("conformance-client", help="the client the MCP conformance suite runs")
    conformance.add_argument("url")


def _print_error(error: SidecarError, as_json: bool) -> None:
    if as_json:
        print(json_text({"error": error.diagnostic.to_json()}))
    else:
        print(one_line(error.diagnostic.render()), file=sys.stderr)


async def login_or_logout(args: argparse.Namespace, project: Path) -> int:
    from mcp_sidecar.services import auth
    from mcp_sidecar.services.app import Sidecar

    app = Sidecar.headless(project, args.trust_project)

    async def announce(url: str) -> bool:
        print(f"Opening the authorization page: {one_line(url)}", file=sys.stderr)
        return False  # then the system browser is tried

    app.logins.open_external = announce
    result: LoginResult | LogoutResult
    try:
        if args.command == "logout":
            result = await auth.logout(app, args.server)
        elif not args.no_browser:
            result = await auth.login(app, args.server, False)
        else:
            pending = await auth.login(app, args.server, True)
            if pending["status"] != "pending":
                result = pending
            else:
                print(strip_controls(pending["text"]), file=sys.stderr)
                print("Callback address: ", end="", file=sys.stderr, flush=True)
                pasted = await asyncio.to_thread(sys.stdin.readline)
                result = await auth.complete_login(app, pending["loginId"], pasted.strip())
    except SidecarError as exc:
        _print_error(exc, args.json)
        return 1
    finally:
        await app.shutdown()
    print(json_text(result) if args.json else strip_controls(result["text"]))
    return 0


async def conformance_client(url: str) -> int:
    from mcp_sidecar.auth.store import CredentialStore, MemoryBackedStore
    from mcp_sidecar.services import activation, auth, status
    from mcp_sidecar.services.app import Sidecar

    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    home = Path(tempfile.mkdtemp(prefix="mcp-sidecar-conformance-"))
    os.environ["MCP_SIDECAR_HOME"] = str(home)
    definition: dict[str, Any] = {"url": url, "oauthCallbackPort": _free_port()}
    if isinstance(context.get("client_id"), str):
        definition["oauthClientId"] = context["client_id"]
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"conformance": definition}}), encoding="utf-8")

    app = Sidecar(lambda method, params: None, workspace=home, use_disk_cache=False, watch_config=False)
    store: CredentialStore = MemoryBackedStore()
    app.logins.store_factory = lambda: store
    app.logins.open_external = _headless_browser
    logins = 0

    async def with_login(step: Any) -> Any:
        nonlocal logins
        while True:
            try:
                return await step()
            except SidecarError as exc:
                code = exc.diagnostic.code
                # One login, plus one step-up: a refused elevation is not retried in a loop.
                if code not in ("authentication_required", "permission_denied") or logins >= 2:
                    raise
                logins += 1
                print(f"{scenario}: {code}; logging in", file=sys.stderr)
                await auth.login(app, "conformance", False)

    try:
        tools = await with_login(lambda: status.server_tools(app, "conformance"))
        names = [t["name"] for t in tools["tools"]]
        call = {"tools_call": ("add_numbers", {"a": 5, "b": 3})}.get(scenario)
        if call is None and names:
            call = (names[0], {})
        if call is not None and call[0] in names:
            tool_id = f"conformance.{call[0]}"
            await activation.activate(app, (tool_id,), "conformance")
            arguments = call[1]
            await with_login(lambda: activation.call_tool(app, tool_id, arguments, "conformance"))
        print(f"{scenario}: done ({len(names)} tools, {logins} logins)", file=sys.stderr)
        return 0
    except SidecarError as exc:
        print(exc.diagnostic.render(), file=sys.stderr)
        return 1
    finally:
        await app.shutdown()


async def _headless_browser(url: str) -> bool:
    """Follow the authorization URL without redirects and deliver its redirect to the loopback listener."""
    import httpx2

    async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as http:
        answer = await http.get(url)
        location = answer.headers.get("location")
        if answer.status_code not in (301, 302, 303, 307, 308) or not location:
            return False
        await http.get(location)
    return True


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


__all__ = ["add_parsers", "conformance_client", "login_or_logout"]
