"""The first steps of a connection attempt, before the SDK: resolve the definition, start the server.

Both run in the connection's owner task, so concurrent requests share one resolution, and a
reconnect or shutdown that cancels the attempt also kills a pending secret command or a
server the transport has not taken over yet.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mcp_sidecar.config import paths, secrets, self_start
from mcp_sidecar.config.interpolate import MissingVariable, ResolvedServer, resolve
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections import stdio
from mcp_sidecar.connections.stderr_log import StderrLog, StderrPipe
from mcp_sidecar.engine.kinds import ENGINE_ENV
from mcp_sidecar.protocol.errors import fail

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Launch:
    """What an attempt started before the transport took over, so that its end can undo it."""

    pipe: StderrPipe | None = None
    server: stdio.ServerProcess | None = None

    async def spawn(
        self, config: ServerConfig, resolved: ResolvedServer, env: dict[str, str], errors: StderrLog
    ) -> None:
        """Stdio servers: the stderr pipe, and the process itself where `connections/stdio.py` runs, with
        `env` only (`process_environment`)."""
        if config.transport != "stdio":
            return
        self.pipe = StderrPipe(errors)
        await self.pipe.start()
        if stdio.SUPPORTED:
            # The server starts while the SDK imports: on a cold sidecar both take about a second.
            assert resolved.command is not None
            self.server = await stdio.spawn(resolved.command, resolved.args, env, resolved.cwd, self.pipe.writer)
            self.pipe.close_writer()

    async def release(self) -> None:
        if self.server is not None and not self.server.taken_over:
            await stdio.stop(self.server)  # the attempt ended before the transport took it over
        if self.pipe is not None:
            self.pipe.close()


async def resolve_server(
    config: ServerConfig, workspace: Path | None, environ: Mapping[str, str], operation: str
) -> ResolvedServer:
    """References and secret commands, resolved for this connection attempt only in the client's
    `environ`; a definition that would start this sidecar itself is refused before anything runs
    (`config/self_start.py`)."""
    try:
        resolved = resolve(config, workspace, environ)
    except MissingVariable as exc:
        raise fail(
            "configuration_invalid",
            operation,
            f"Environment variable {exc.variable} (used in `{exc.field_name}`) is not set.",
            config.name,
        ) from None
    _refuse_itself(config, resolved, workspace, environ, operation)
    if not resolved.secret_commands():
        return resolved
    # HTTP servers have no cwd; their secret commands run where a stdio server would.
    cwd = resolved.cwd or str(workspace or paths.neutral_dir())
    try:
        filled = await secrets.fill_secrets(resolved, cwd, secrets.time_limit(config.timeout_ms), environ)
    except secrets.SecretLookupFailed as exc:
        message = f"The secret command in `{exc.field_name}` {exc.reason}."
        raise fail("secret_lookup_failed", operation, message, config.name) from None
    log.info("server %s: ran %d secret command(s)", config.name, len(resolved.secret_commands()))
    return filled


def _refuse_itself(
    config: ServerConfig, resolved: ResolvedServer, workspace: Path | None, environ: Mapping[str, str], operation: str
) -> None:
    if config.transport != "stdio" or resolved.command is None:
        return
    chain = self_start.inherited_chain(environ)
    why = self_start.chain_refusal(chain, self_start.chain_key(config.raw, resolved.cwd))
    if why is None:
        env = stdio.server_environment({k: v for k, v in resolved.env.items() if isinstance(v, str)}, environ)
        cwd = resolved.cwd or str(paths.neutral_dir())
        found = self_start.invocation(resolved.command, resolved.args, cwd, env)
        if found is not None:
            why = self_start.refusal(config.scope, found, workspace, env)
    if why is not None:
        log.warning("server %s: not started: it would start this sidecar itself", config.name)
        raise fail("server_starts_itself", operation, why, config.name)


def chain_environment(config: ServerConfig, resolved: ResolvedServer, environ: Mapping[str, str]) -> dict[str, str]:
    """What a stdio server is started with besides its own variables: the chain of definitions that
    started this client's sidecar (from its `environ`), and this one's key, so a sidecar it starts
    can refuse to start it again; and the engine off, so a sidecar started as a server (a gateway
    over another configuration, a wrapper script) runs in its own process with that chain, never as
    a client of the engine that started it."""
    if config.transport != "stdio":
        return {}
    chain = self_start.inherited_chain(environ)
    return {
        self_start.CHAIN_ENV: self_start.passed_on(chain, self_start.chain_key(config.raw, resolved.cwd)),
        ENGINE_ENV: "off",
    }


def process_environment(config: ServerConfig, resolved: ResolvedServer, environ: Mapping[str, str]) -> dict[str, str]:
    """Everything a stdio server's process starts with, from the client's `environ`: the inherited basics,
    the definition's variables and the chain. A secret command not run yet stands as its text (the
    sharing key's view, `connections/sharing.py`); the connection attempt runs them first."""
    own = {key: value if isinstance(value, str) else f"!{value.command}" for key, value in resolved.env.items()}
    return stdio.server_environment(own | chain_environment(config, resolved, environ), environ)


__all__ = ["Launch", "chain_environment", "process_environment", "resolve_server"]
