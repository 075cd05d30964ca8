"""Every request handler, built from the operation table: params → feature → result, one row each."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_sidecar.handlers.base import Handler, guarded
from mcp_sidecar.operations.row import Operation, invoke
from mcp_sidecar.operations.table import ROWS
from mcp_sidecar.protocol import methods

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar


def row_handler(app: Sidecar, row: Operation[Any]) -> Handler:
    """The handler of `row.method`: the row's parser and call, failures made JSON-RPC errors (`base.py`)."""

    @guarded(row.label)
    async def on_request(raw: Any) -> Any:
        return await invoke(row, app, row.parse(row.label, raw))

    return on_request


def request_handlers(app: Sidecar, rows: tuple[Operation[Any], ...] = ROWS) -> dict[str, Handler]:
    table = {row.method: row_handler(app, row) for row in rows}
    if len(table) != len(rows):
        raise RuntimeError("two rows of the operation table name one method")
    missing = set(methods.REQUESTS) - set(table)
    if missing:
        raise RuntimeError(f"no handler for {sorted(missing)}")
    return table
