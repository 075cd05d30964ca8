"""`conformance-client URL`: the client the official MCP conformance suite drives.

The suite starts a mock server (and, for `auth/*` scenarios, a mock authorization server),
then runs this command with the server's URL appended and the scenario's name in
MCP_CONFORMANCE_SCENARIO (credentials, when a scenario hands any, in MCP_CONFORMANCE_CONTEXT
as JSON). It grades the traffic, not the exit status. Each scenario expects one thing of the
client (`SCENARIOS`): connect and list, call a named tool, answer an elicitation with the
schema's defaults (SEP-1034), or log in first (every `auth/*` scenario).

All of it goes through the sidecar's own parts: a `Sidecar` app with its configuration
loading, connection, client offer, event hub, login and diagnostics, with two stand-ins: an
in-memory credential store (the suite's runs are throwaway) and a "browser" that follows the
authorization URL without redirects and delivers the redirect to the real loopback listener,
as a person's browser would.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_sidecar.cli_elicit import schema_defaults
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.protocol.errors import SidecarError

if TYPE_CHECKING:
    from mcp_sidecar.events import ElicitationAsked
    from mcp_sidecar.services.app import Sidecar

SERVER = "conformance"
SESSION = "conformance"
SECRET_VARIABLE = "MCP_CONFORMANCE_CLIENT_SECRET"
SUITE_CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client metadata document URL the suite's `auth/basic-cimd` expects as the client id."""


@dataclass(frozen=True)
class Scenario:
    """What one scenario expects of the client."""

    tool: str | None = None
    """The tool to call; None: the first tool the server lists, if any."""
    arguments: dict[str, Any] = field(default_factory=dict)
    offer: ClientOffer = field(default_factory=ClientOffer)
    defaults: bool = False
    """Answer form elicitations by accepting the schema's defaults (what a person pressing Enter does)."""


SCENARIOS: dict[str, Scenario] = {
    "initialize": Scenario(),
    "tools_call": Scenario("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": Scenario(
        "test_client_elicitation_defaults", offer=ClientOffer(elicitation_form=True), defaults=True
    ),
    "sse-retry": Scenario("test_reconnection"),
}
"""The scenarios that are not `auth/*`; those call the first listed tool after logging in."""


def add_parser(sub: Any) -> None:
    conformance = sub.add_parser("conformance-client", help="the client the MCP conformance suite runs")
    conformance.add_argument("url")


async def accept_defaults(request: ElicitationAsked) -> dict[str, Any]:
    """A form accepted as offered: every default the schema gives; a URL step is declined."""
    if request.params.get("mode") != "form":
        return {"action": "decline"}
    return {"action": "accept", "content": schema_defaults(request.params["requestedSchema"])}


async def conformance_client(url: str) -> int:
    from mcp_sidecar.auth.store import CredentialStore, MemoryBackedStore
    from mcp_sidecar.events import ElicitationAsked
    from mcp_sidecar.services.app import Sidecar

    name = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    scenario = SCENARIOS.get(name, Scenario())
    home = Path(tempfile.mkdtemp(prefix="mcp-sidecar-conformance-"))
    os.environ["MCP_SIDECAR_HOME"] = str(home)
    definition: dict[str, Any] = {"url": url, "oauthCallbackPort": _free_port()}
    if isinstance(context.get("client_id"), str):
        definition["oauthClientId"] = context["client_id"]
    if isinstance(context.get("client_secret"), str):
        # A confidential client, its secret referenced as a user's configuration would (never written).
        os.environ[SECRET_VARIABLE] = context["client_secret"]
        definition["oauthClientSecret"] = "${" + SECRET_VARIABLE + "}"
    # The suite's mock accepts this URL as a client id when it advertises client ID metadata
    # documents (auth/basic-cimd); elsewhere the sidecar registers dynamically.
    (home / "mcp.json").write_text(
        json.dumps({"oauthClientMetadataUrl": SUITE_CLIENT_METADATA_URL, "mcpServers": {SERVER: definition}}),
        encoding="utf-8",
    )

    app = Sidecar(lambda method, params: None, workspace=home, use_disk_cache=False, watch_config=False)
    app.offers.current = scenario.offer
    if scenario.defaults:
        app.hub.answer(ElicitationAsked, accept_defaults)
    store: CredentialStore = MemoryBackedStore()
    app.auth.store_factory = lambda: store
    app.auth.open_external = _headless_browser
    run = _Run(app, name)
    try:
        listed = await run.with_login(lambda: _tool_names(app))
        tool = scenario.tool if scenario.tool is not None else next(iter(listed), None)
        if tool is not None and tool in listed:
            await run.call(tool, scenario.arguments)
        print(f"{name}: done ({len(listed)} tools, {run.logins} logins)", file=sys.stderr)
        return 0
    except SidecarError as exc:
        print(exc.diagnostic.render(), file=sys.stderr)
        return 1
    finally:
        await app.shutdown()


class _Run:
    """One scenario's requests, each logging in when the server asks for it (at most twice)."""

    def __init__(self, app: Sidecar, scenario: str) -> None:
        self.app = app
        self.scenario = scenario
        self.logins = 0

    async def with_login(self, step: Callable[[], Awaitable[Any]]) -> Any:
        while True:
            try:
                return await step()
            except SidecarError as exc:
                code = exc.diagnostic.code
                # One login, plus one step-up: a refused elevation is not retried in a loop.
                if code not in ("authentication_required", "permission_denied") or self.logins >= 2:
                    raise
                self.logins += 1
                print(f"{self.scenario}: {code}; logging in", file=sys.stderr)
                result = await self.app.auth.login(SERVER, False)
                if result["status"] == "needs_approval":
                    # The person running the suite approves the step-up (`login --approve-scopes`).
                    print(f"{self.scenario}: approving {' '.join(result['extraScopes'])}", file=sys.stderr)
                    await self.app.auth.login(SERVER, False, tuple(result["extraScopes"]))

    async def call(self, tool: str, arguments: dict[str, Any]) -> None:

        tool_id = f"{SERVER}.{tool}"
        await self.app.activation.activate((tool_id,), SESSION)
        result = await self.with_login(lambda: self.app.activation.call_tool(tool_id, arguments, SESSION))
        if result.get("isError"):
            print(f"{self.scenario}: {tool} answered an error", file=sys.stderr)


async def _tool_names(app: Sidecar) -> list[str]:
    tools = await app.status.server_tools(SERVER)
    return [t["name"] for t in tools["tools"]]


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


__all__ = ["SCENARIOS", "Scenario", "accept_defaults", "add_parser", "conformance_client"]
