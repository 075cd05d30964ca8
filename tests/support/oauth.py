"""Playing the browser in OAuth tests: follow the authorization URL, deliver the redirect."""

from __future__ import annotations

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
