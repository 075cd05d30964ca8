"""The private parts of uvicorn the gateway's connection guard builds on (`gateway/http_guard.py`): a
new version that renames one fails here, by name, not in a host's session. (The SDK's, which the
session table builds on, are pinned with the rest of them in tests/unit/connections/test_sdk_shim.py.)"""

from __future__ import annotations

import inspect


def test_uvicorns_h11_protocol_has_what_the_connection_guard_uses() -> None:
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

    for method in ("connection_made", "data_received", "on_response_complete", "connection_lost"):
        assert callable(getattr(H11Protocol, method)), method
    source = inspect.getsource(H11Protocol)
    for attribute in ("self.cycle = ", "self.headers = ", "self.transport = ", "self.loop = "):
        assert attribute in source, attribute
    assert "self.response_complete = False" in inspect.getsource(RequestResponseCycle.__init__)
