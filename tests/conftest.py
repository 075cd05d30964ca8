"""What every test's processes inherit, and the mode the run is in."""

from __future__ import annotations

import os

from mcp_sidecar.engine.kinds import ENGINE_ENV, OFF

# The engine (the default) that a test's sidecars start for its own MCP_SIDECAR_HOME outlives its
# last front by this grace period: short here, so a finished test leaves nothing running long.
os.environ.setdefault("MCP_SIDECAR_ENGINE_GRACE", "2")


def pytest_report_header() -> str:
    off = os.environ.get(ENGINE_ENV, "").strip().lower() in OFF
    return f"mcp-sidecar engine: {'off, each client in its own process' if off else 'on (the default)'}"
