"""Playing the browser in OAuth tests, and keeping the sidecar under test on loopback."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import httpx2


async def play_browser(url: str) -> bool:
    """Follow the authorization URL (the test AS approves at once) and deliver its redirect."""
    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.get(url, follow_redirects=False)
        assert answer.status_code in (302, 303, 307), answer.status_code
        callback = await http.get(answer.headers["location"])
        assert callback.status_code == 200
    return True


async def redirect_of(url: str) -> str:
    """The address the browser would be sent to (what a person pastes in the no-browser flow)."""
    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.get(url, follow_redirects=False)
    return str(answer.headers["location"])


def with_state(callback: str, state: str | None) -> str:
    """`callback` with its `state` replaced (or removed, for None)."""
    parts = urlsplit(callback)
    query = {k: v[0] for k, v in parse_qs(parts.query).items() if k != "state"}
    if state is not None:
        query["state"] = state
    return urlunsplit(parts._replace(query=urlencode(query)))


def forging_browser(statuses: list[int]) -> Callable[[str], Awaitable[bool]]:
    """A browser on a machine where another page hits the callback port first.

    Before the real redirect arrives, the callback is sent with a forged state, with no state,
    and with a forged code and state; `statuses` receives the listener's answers, in order.
    """

    async def browse(url: str) -> bool:
        async with httpx2.AsyncClient(timeout=10) as http:
            answer = await http.get(url, follow_redirects=False)
            location = answer.headers["location"]
            forged = with_state(location, "forged-state")
            redirect = urlsplit(location)
            made_up = urlunsplit(redirect._replace(query=urlencode({"code": "made-up", "state": "made-up"})))
            for attempt in (forged, with_state(location, None), made_up, location):
                statuses.append((await http.get(attempt)).status_code)
        return True

    return browse


# The sidecar under test may open sockets to loopback addresses only. This module is written
# as `sitecustomize.py` into a directory on the sidecar's PYTHONPATH, so it runs before any of
# the sidecar's code; every refused attempt is appended to MCP_TEST_EGRESS_LOG. A regression
# that makes the sidecar reach for 169.254.169.254 fails the test instead of sending a packet.
_GUARD = '''\
"""Test-only (tests/support/oauth.py): sockets to loopback addresses only."""
import errno
import ipaddress
import os
import socket

_log = os.environ["MCP_TEST_EGRESS_LOG"]
_connect, _connect_ex, _getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


def _record(what):
    with open(_log, "a", encoding="utf-8") as out:
        out.write(what + "\\n")


def _address(host):
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return None


def _refuse(address):
    if not isinstance(address, tuple):
        return  # a Unix socket (D-Bus for the Secret Service)
    found = _address(address[0])
    if found is None or not found.is_loopback:
        _record(f"connect {address[0]}")
        raise OSError(errno.ENETUNREACH, "the test's egress guard allows loopback only")


def connect(self, address):
    _refuse(address)
    return _connect(self, address)


def connect_ex(self, address):
    _refuse(address)
    return _connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if name is not None and name != "localhost" and _address(name) is None:
        _record(f"resolve {name}")
        raise socket.gaierror(socket.EAI_NONAME, "the test's egress guard resolves nothing but localhost")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.getaddrinfo = getaddrinfo
'''


def egress_guard(directory: Path) -> tuple[dict[str, str], Path]:
    """The environment that confines a Python process to loopback, and the file that lists its attempts."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(_GUARD, encoding="utf-8")
    log = directory / "egress.log"
    path = [str(directory), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(path), "MCP_TEST_EGRESS_LOG": str(log)}, log


def egress_attempts(log: Path) -> list[str]:
    """What the guarded process tried to reach beyond loopback (connects and name lookups)."""
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []
