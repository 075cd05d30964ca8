"""The typed server definition, one per configured server.

Field names follow the `mcpServers` JSON format (see docs/configuration.md for each field's
meaning). Values are stored as written, with `${VAR}` references unresolved; resolution
happens only when a server connects (see `interpolate.py`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Scope = Literal["global", "project", "builtin"]
Transport = Literal["stdio", "http"]
ProtocolMode = Literal["auto", "legacy"]

DEFAULT_REQUEST_TIMEOUT_MS = 15_000
"""Discovery, connection and HTTP requests."""
DEFAULT_STDIO_CALL_TIMEOUT_MS = 30_000
"""Tool calls on stdio servers."""
MIN_TIMEOUT_MS = 100
MAX_TIMEOUT_MS = 600_000
DEFAULT_OAUTH_CALLBACK_PORT = 19847


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    scope: Scope
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    description: str | None = None
    disabled: bool = False
    include_tools: tuple[str, ...] | None = None
    """Allowlist of original tool names (`*` globs); None exposes every tool, () none."""
    exclude_tools: tuple[str, ...] = ()
    timeout_ms: int | None = None
    protocol: ProtocolMode = "auto"
    oauth_client_id: str | None = None
    oauth_client_secret: str | None = field(default=None, repr=False)
    """As written: a `${VAR}` reference or a `!command` (a literal only in the global file)."""
    oauth_client_metadata_url: str | None = None
    """The client ID metadata document's URL (CIMD); the global file's top-level option fills it in."""
    oauth_dpop: bool = False
    oauth_issuer: str | None = None
    """The only authorization server (issuer) a login may use; pins a confidential client's secret to it."""
    oauth_scopes: tuple[str, ...] | None = None
    oauth_callback_port: int | None = None
    roots: bool = True
    """Offer MCP roots (the trusted workspace's folders); `"roots": false` withholds them."""
    log_level: str = "warning"
    """The lowest level of the server's log messages the sidecar asks for (`logLevel`)."""
    shared: bool = True
    """One process may serve every client whose definition, run directory, offer and roots are equal
    (the engine); `"shared": false` gives each client its own."""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The definition as written, for fingerprints and faithful rewrites."""
    approval_required: bool = False
    """A project definition that is new or changed since the person approved it: kept disabled
    (`trust_required`) until approved (see `config/approvals.py`)."""

    @property
    def request_timeout_s(self) -> float:
        return (self.timeout_ms or DEFAULT_REQUEST_TIMEOUT_MS) / 1000

    @property
    def call_timeout_s(self) -> float:
        if self.timeout_ms is not None:
            return self.timeout_ms / 1000
        default = DEFAULT_STDIO_CALL_TIMEOUT_MS if self.transport == "stdio" else DEFAULT_REQUEST_TIMEOUT_MS
        return default / 1000

    def fingerprint(self) -> str:
        """Changes exactly when the definition as written changes (references, not values)."""
        material: dict[str, Any] = {"scope": self.scope, "def": self.raw}
        if self.approval_required:
            material["approvalRequired"] = True  # approving it replaces the disabled connection
        canonical = json.dumps(material, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()

    def filters_json(self) -> dict[str, Any]:
        return {
            "includeTools": list(self.include_tools) if self.include_tools is not None else None,
            "excludeTools": list(self.exclude_tools),
        }
