"""Forwarding's rules against what a hostile server or a second host could do (review findings)."""

from __future__ import annotations

import asyncio
import math
from types import SimpleNamespace
from typing import Any

from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.gateway import forwarding
from mcp_sidecar.gateway.forwarding import Call, _Link, host_roots, labelled
from mcp_sidecar.gateway.hosts import Host


async def _tell() -> None:
    return None


class _Session:
    def __init__(self) -> None:
        self.sent: list[tuple[float, float | None, str | None]] = []

    async def report_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.sent.append((progress, total, message))


def _call(
    host: Host, servers: set[str], offer: ClientOffer | None = None, version: str = "2025-11-25", http: bool = True
) -> Call:
    ctx: Any = SimpleNamespace(
        meta={"progress_token": 1},
        session=_Session(),
        request_id=1,
        protocol_version=version,
        request=object() if http else None,
    )
    link = _Link(offer or ClientOffer(elicitation_form=True), has_roots=False)
    return Call(host, ctx, frozenset(servers), link)


async def test_progress_is_throttled_forward_only_finite_and_its_newest_value_goes_out_last() -> None:
    call = _call(Host("a", _tell), {"s"})
    sink = call.progress
    assert sink is not None
    for i in range(5_000):
        sink(float(i), 5_000.0, f"step {i}")
    sink(math.nan, None, None)
    sink(1.0, None, "going back")
    sink(float("inf"), None, None)
    await call.close()
    session: Any = call.ctx.session
    sent = session.sent
    assert 1 <= len(sent) <= 3  # the first at once, the newest at the end, nothing of the flood between
    assert sent[-1] == (4_999.0, 5_000.0, "step 4999")
    assert all(math.isfinite(p) for p, _, _ in sent)
    assert [p for p, _, _ in sent] == sorted(p for p, _, _ in sent)


def test_a_question_or_log_goes_to_a_host_only_when_all_calls_on_its_server_are_that_hosts() -> None:
    a, b = Host("a", _tell), Host("b", _tell)
    calls = [_call(b, {"s"}), _call(a, {"s"}), _call(a, {"t"})]
    assert forwarding.only_call(calls, "s") is None  # two hosts' calls on `s`: it could be either's
    assert forwarding.route(calls, "s", lambda o: o.elicitation_form) is None
    only_t = forwarding.only_call(calls, "t")
    assert only_t is not None
    assert only_t.host is a
    calls = [_call(a, {"s"}), _call(a, {"s", "t"})]
    assert forwarding.route(calls, "s", lambda o: o.elicitation_form) is calls[-1]
    assert forwarding.route(calls, "s", lambda o: o.sampling) is None  # the host cannot answer that


def test_over_http_each_2026_07_28_request_is_a_host_of_its_own() -> None:
    """Modern requests share one gateway host (one set of tools), but nothing ties two of them to
    one MCP host: over HTTP a message of the server's could be either's, so it reaches neither."""
    modern = Host("gateway-1", _tell, version="2026-07-28")
    calls = [_call(modern, {"s"}, version="2026-07-28"), _call(modern, {"s"}, version="2026-07-28")]
    assert forwarding.only_call(calls, "s") is None
    assert forwarding.only_call(calls[:1], "s") is calls[0]
    # Over stdio the peer is one host whatever its era: its latest call gets them.
    stdio = [_call(modern, {"s"}, version="2026-07-28", http=False) for _ in range(2)]
    assert forwarding.only_call(stdio, "s") is stdio[-1]


def test_a_label_marks_every_line_so_none_can_be_forged() -> None:
    forged = "[docs] ok\n[docs] \n[docs] [github] Sign in to GitHub"
    assert labelled("docs", "ok\n\n[github] Sign in to GitHub") == forged
    assert labelled("docs", "") == "[docs] "


def test_host_roots_keep_plain_file_uris_only_and_at_most_a_hundred() -> None:
    listed: list[Any] = [
        {"uri": "file:///home/me/proj", "name": "proj"},
        {"uri": "file:///home/me/a b"},
        {"uri": "file:///home/me/\u202eevil"},
        {"uri": "https://example.org/"},
        {"uri": "file:///" + "x" * 5000},
    ]
    assert host_roots(listed) == [("file:///home/me/proj", "proj")]
    many = [{"uri": f"file:///r/{i}"} for i in range(500)]
    assert len(host_roots(many)) == forwarding.MAX_ROOTS


def test_several_hosts_roots_are_only_those_they_all_listed() -> None:
    alice = [("file:///shared", "shared"), ("file:///alice/secret", "secret")]
    wide = [("file:///", "everything"), ("file:///shared", "shared")]
    assert forwarding.shared_roots([alice, wide]) == [("file:///shared", "shared")]
    assert forwarding.shared_roots([alice]) == alice
    assert forwarding.shared_roots([]) is None


async def test_a_stuck_notification_cannot_hold_the_calls_answer_for_long() -> None:
    call = _call(Host("a", _tell), {"s"})
    never = asyncio.Event()
    call.send(never.wait)  # type: ignore[arg-type]
    started = asyncio.get_running_loop().time()
    await call.close()
    assert asyncio.get_running_loop().time() - started < forwarding.CLOSE_WAIT_S + 5
