from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from support.sidecar import SidecarClient, start_sidecar


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty MCP_SIDECAR_HOME; tests write `mcp.json` into it before starting the sidecar."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
async def sidecar(home: Path, tmp_path: Path) -> AsyncIterator[SidecarClient]:
    """A sidecar started on `home` (write the config first), initialized with a trusted workspace."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    async with start_sidecar(home, project=project, trusted=True) as client:
        yield client
