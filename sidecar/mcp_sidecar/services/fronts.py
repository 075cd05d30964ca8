"""The engine as its clients see it: which engine serves them, and through which front each one came.

The engine (`engine/server.py`) sets `UserState.engine` once, and serves each front inside
`serving(Front(...))`: a client built in that task (an editor's, a host's, a CLI run's) is
recorded as that front's when it attaches to the user's state (`Fronts.attach`), with a way to
read its workspace as it is now. `mcp/status` lists them (`Fronts.status`): each client's kind
and workspace, never anything else of it (no environment, no secret, no session). In a process
of its own nothing is recorded and the status says `engine: null`.

Nothing here imports a client's module (`tests/unit/test_layers.py`); the engine's package is
not imported either (services never name it): the engine fills these in.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import EngineClient, EngineStatus


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """The engine process serving this user's state."""

    pid: int
    version: str
    started: float
    """`time.time()` when it started."""


@dataclass(frozen=True, slots=True)
class Front:
    """One front attached to the engine: an editor (`lsp`), a host's stdio gateway (`mcp`) or a CLI run (`cli`)."""

    kind: str
    attached: float
    """`time.time()` when it attached."""


_FRONT: ContextVar[Front | None] = ContextVar("mcp_sidecar_front", default=None)


@contextlib.contextmanager
def serving(front: Front) -> Iterator[Front]:
    """Clients built in this task (and the tasks it starts) inside the block came through `front`."""
    token = _FRONT.set(front)
    try:
        yield front
    finally:
        _FRONT.reset(token)


Workspace = Callable[[], Path | None]
"""A client's workspace as it is now (an editor's may change at `initialize`)."""


@dataclass(frozen=True, slots=True)
class _Attached:
    front: Front
    workspace: Workspace


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class Fronts:
    """The front each attached client came through, by the client's id, in the order they attached."""

    def __init__(self) -> None:
        self._attached: dict[str, _Attached] = {}

    def attach(self, client: str, workspace: Workspace) -> None:
        """Record `client` as the current front's (nothing outside a front: a process of its own)."""
        front = _FRONT.get()
        if front is not None:
            self._attached[client] = _Attached(front, workspace)

    def detach(self, client: str) -> None:
        self._attached.pop(client, None)

    def __len__(self) -> int:
        return len(self._attached)

    def status(self, engine: EngineInfo, this: str, now: float | None = None) -> EngineStatus:
        """The engine and its clients as `mcp/status` shows them to client `this`."""
        now = time.time() if now is None else now
        clients: list[EngineClient] = []
        for client, attached in self._attached.items():
            workspace = attached.workspace()
            clients.append(
                {
                    "kind": attached.front.kind,
                    "workspace": str(workspace) if workspace is not None else None,
                    "since": _iso(attached.front.attached),
                    "thisClient": client == this,
                }
            )
        return {
            "pid": engine.pid,
            "version": engine.version,
            "since": _iso(engine.started),
            "uptimeSeconds": max(0, int(now - engine.started)),
            "clients": clients,
        }
