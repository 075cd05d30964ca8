"""Start the real sidecar (`python -m mcp_sidecar`) over stdio and talk to it with pytest-lsp's client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from mcp_sidecar.protocol import methods
from mcp_sidecar.server import dict_converter

NOTIFICATIONS = methods.NOTIFICATIONS
Params = dict[str, Any] | types.ExecuteCommandParams
"""What a request sends: the sidecar's own methods take JSON objects; LSP's take lsprotocol types."""


class SidecarClient:
    """A pytest-lsp client plus the notifications the sidecar sent, by method."""

    def __init__(self, client: LanguageClient, home: Path) -> None:
        self.lsp = client
        self.home = home
        self.notifications: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.shown: list[str] = []
        """URIs the sidecar asked to open with window/showDocument."""

    @property
    def pid(self) -> int:
        """The process pytest-lsp started: the sidecar, or with the engine on its front."""
        process = self.lsp._server  # noqa: SLF001 (pygls keeps the process it started to itself)
        assert process is not None
        return process.pid

    async def request(self, method: str, params: Params | None = None, timeout: float = 60) -> Any:
        return await asyncio.wait_for(self.lsp.protocol.send_request_async(method, params or {}), timeout)

    async def error(self, method: str, params: Params | None = None, timeout: float = 60) -> JsonRpcException:
        """Send a request that must fail; return the JSON-RPC error (its `data` is the diagnostic)."""
        try:
            result = await self.request(method, params, timeout)
        except JsonRpcException as exc:
            return exc
        raise AssertionError(f"{method} succeeded unexpectedly: {result!r}")

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 30, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)

    def states(self, server: str) -> list[str]:
        """The states `mcp/serverStatus` reported for `server`, in order, repeats collapsed."""
        out: list[str] = []
        for row in self.notifications[methods.SERVER_STATUS]:
            if row["name"] == server and (not out or out[-1] != row["state"]):
                out.append(row["state"])
        return out

    def log_text(self) -> str:
        path = self.home / "sidecar.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


async def wait_until(predicate: Callable[[], bool], within: float = 30, what: str = "condition") -> None:
    """Poll `predicate` until it holds, failing after `within` seconds (no client needed)."""
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=dict_converter)
    register_lsp_features(client)
    return client


def write_config(home: Path, servers: dict[str, Any], name: str = "mcp.json") -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / name
    path.write_text(json.dumps({"mcpServers": servers}, indent=2), encoding="utf-8")
    return path


@asynccontextmanager
async def start_sidecar(
    home: Path,
    *,
    project: Path | None = None,
    trusted: bool = False,
    interactive: bool = False,
    initialize: bool = True,
    env: dict[str, str] | None = None,
    browser: Callable[[str], Awaitable[bool]] | None = None,
    options: dict[str, Any] | None = None,
    answers: Mapping[str, Callable[[Any], Awaitable[Any]]] | None = None,
    folders: list[Path] | None = None,
    args: tuple[str, ...] = (),
) -> AsyncIterator[SidecarClient]:
    """`browser`: declare `window/showDocument` support and answer it by calling browser(uri).
    `options`: more `initializationOptions` (e.g. `trustGranted`, `mcpCapabilities`).
    `answers`: the client's answers to the sidecar's requests (`mcp/elicit`, `mcp/sample`), by method.
    `folders`: the workspace folders (`workspaceFolders`), besides `rootUri`.
    `args`: more words on the sidecar's command line (`--profile NAME`)."""
    server_env = {**os.environ, "MCP_SIDECAR_HOME": str(home), **(env or {})}
    command = [sys.executable, "-m", "mcp_sidecar", "-v", "--log-file", str(home / "sidecar.log")]
    if project is not None:
        command += ["--project", str(project)]
    command += list(args)
    config = ClientServerConfig(server_command=command, client_factory=make_client, server_env=server_env)
    lsp = await config.start()
    assert isinstance(lsp, LanguageClient)  # what make_client builds
    sidecar = SidecarClient(lsp, home)
    for method in NOTIFICATIONS:

        def record(params: Any, method: str = method) -> None:
            sidecar.notifications[method].append(params)

        lsp.feature(method)(record)
    if browser is not None:

        async def show_document(params: Any) -> dict[str, bool]:
            uri = params["uri"] if isinstance(params, dict) else params.uri
            sidecar.shown.append(uri)
            return {"success": await browser(uri)}

        # pytest-lsp registers its own recording handler; this one plays the browser instead.
        lsp.protocol.fm.features["window/showDocument"] = show_document
    for method, answer in (answers or {}).items():
        lsp.protocol.fm.features[method] = answer

    try:
        if initialize:
            await asyncio.wait_for(
                lsp.initialize_session(
                    types.InitializeParams(
                        capabilities=types.ClientCapabilities(
                            window=types.WindowClientCapabilities(
                                show_document=types.ShowDocumentClientCapabilities(support=True)
                            )
                            if browser is not None
                            else None
                        ),
                        root_uri=project.as_uri() if project else None,
                        workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders]
                        if folders
                        else None,
                        initialization_options={
                            "trustedWorkspace": trusted,
                            "interactive": interactive,
                            **(options or {}),
                        },
                    )
                ),
                30,
            )
        yield sidecar
    finally:
        if initialize:
            try:
                await asyncio.wait_for(lsp.shutdown_session(), 30)
            except Exception:
                await lsp.stop()
        else:
            await lsp.stop()


def diagnostic_of(error: JsonRpcException) -> dict[str, Any]:
    """The diagnostic a failed request carries in `error.data`."""
    assert isinstance(error.data, dict), f"no diagnostic in {error!r}"
    return error.data


def engine_processes(marker: str) -> list[int]:
    """The engine processes (`mcp-sidecar engine`) whose environment holds `marker` (`NAME=value`)."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp_sidecar" in cmdline and b"engine" in cmdline and needle in environ:
            found.append(int(entry.name))
    return found


def engine_pids(home: Path) -> list[int]:
    """The engines serving `MCP_SIDECAR_HOME=home` (the default mode); none with the engine off."""
    return engine_processes(f"MCP_SIDECAR_HOME={home}")


async def restart_engine(home: Path, within: float = 30) -> None:
    """End the engine serving `home` (SIGTERM: it closes its servers), as a reboot or an upgrade would,
    so the next sidecar starts from the disk, not from a running engine's memory. With the engine
    off the sidecar that ended took everything with it already: nothing to do."""
    pids = engine_pids(home)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    await wait_until(lambda: not set(pids) & set(engine_pids(home)), within, "the engine to exit")
