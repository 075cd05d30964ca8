"""The private parts of the SDK and uvicorn the gateway's HTTP guards build on (`gateway/http_sessions.py`,
`gateway/http_guard.py`): a new version that renames one fails here, by name, not in a host's session."""

from __future__ import annotations

import inspect

from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


def test_the_session_managers_admission_and_discard_are_where_the_table_hooks_in() -> None:
    admit = inspect.signature(StreamableHTTPSessionManager._admit_session)  # noqa: SLF001
    discard = inspect.signature(StreamableHTTPSessionManager._discard_session)  # noqa: SLF001
    assert list(admit.parameters) == ["self", "requestor"]
    assert not inspect.iscoroutinefunction(StreamableHTTPSessionManager._admit_session)  # noqa: SLF001
    assert list(discard.parameters) == ["self", "session_id", "transport"]
    manager = StreamableHTTPSessionManager(Server("pin"))
    assert manager._server_instances == {}  # noqa: SLF001
    assert manager._session_owners == {}  # noqa: SLF001
    assert manager._task_group is None  # noqa: SLF001
    assert "handle_request" in vars(StreamableHTTPSessionManager)


def test_uvicorns_h11_protocol_has_what_the_connection_guard_uses() -> None:
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

    for method in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        assert callable(getattr(H11Protocol, method)), method
    source = inspect.getsource(H11Protocol)
    for attribute in ("self.cycle = ", "self.headers = ", "self.transport = ", "self.loop = "):
        assert attribute in source, attribute
    assert "self.response_complete = False" in inspect.getsource(RequestResponseCycle.__init__)
