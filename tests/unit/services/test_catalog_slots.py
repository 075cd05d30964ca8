"""Discovery slots: at most N servers in flight, one slot per server shared by all its users."""

from __future__ import annotations

import asyncio

import pytest

from mcp_sidecar.events import EventHub
from mcp_sidecar.services.catalogs import Catalogs


def catalogs(slots: int) -> Catalogs:
    return Catalogs(None, asyncio.Semaphore(slots), EventHub())


async def free_slots(slots: asyncio.Semaphore) -> int:
    """How many slots are free, through the semaphore's public API: take them all, give them back."""
    taken = 0
    while not slots.locked():
        await slots.acquire()  # immediate: a semaphore that is not locked never waits
        taken += 1
    for _ in range(taken):
        slots.release()
    return taken


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_users_of_one_server_share_its_slot() -> None:
    c = catalogs(2)
    async with c.slot("a"), c.slot("a"):
        async with c.slot("a"):
            assert await free_slots(c.slots) == 1
        assert await free_slots(c.slots) == 1
    assert await free_slots(c.slots) == 2


async def test_a_server_waits_while_every_slot_is_held_by_others() -> None:
    c = catalogs(2)
    entered: list[str] = []
    release = asyncio.Event()

    async def hold(server: str) -> None:
        async with c.slot(server):
            entered.append(server)
            await release.wait()

    tasks = [asyncio.create_task(hold(s)) for s in ("a", "b", "c", "a")]
    await settle()
    assert sorted(entered) == ["a", "a", "b"]  # the second `a` joined a's slot; `c` waits
    release.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert entered[3:] == ["c"]
    assert await free_slots(c.slots) == 2


async def test_a_lock_holder_joining_its_servers_slot_cannot_deadlock() -> None:
    """The deadlock a per-task slot allowed: every slot held by tasks that wait for locks
    whose holders wait for a slot of the same server."""
    c = catalogs(1)
    lock = asyncio.Lock()
    order: list[str] = []

    async def activation() -> None:
        async with lock:  # the catalog lock first, then the slot (as tool_catalog does)
            await settle()
            async with c.slot("s"):
                order.append("activation fetched")

    async def discovery() -> None:
        async with c.slot("s"):  # the slot first, then the lock (as a discovery does)
            await settle()
            async with lock:
                order.append("discovery used it")

    await asyncio.wait_for(asyncio.gather(activation(), discovery()), 5)
    assert sorted(order) == ["activation fetched", "discovery used it"]
    assert await free_slots(c.slots) == 1


async def test_a_cancelled_first_user_does_not_strand_the_others() -> None:
    c = catalogs(1)
    blocker_release = asyncio.Event()

    async def blocker() -> None:
        async with c.slot("busy"):
            await blocker_release.wait()

    async def user(done: list[str], name: str) -> None:
        async with c.slot("s"):
            done.append(name)

    done: list[str] = []
    holding = asyncio.create_task(blocker())
    await settle()
    first = asyncio.create_task(user(done, "first"))
    second = asyncio.create_task(user(done, "second"))
    await settle()
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    blocker_release.set()
    await asyncio.wait_for(asyncio.gather(holding, second), 5)
    assert done == ["second"]
    assert await free_slots(c.slots) == 1


async def test_the_last_user_leaving_before_the_grant_gives_nothing_away() -> None:
    c = catalogs(1)
    release = asyncio.Event()

    async def blocker() -> None:
        async with c.slot("busy"):
            await release.wait()

    async def waiter() -> None:
        async with c.slot("s"):
            raise AssertionError("never entered")

    holding = asyncio.create_task(blocker())
    await settle()
    waiting = asyncio.create_task(waiter())
    await settle()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    release.set()
    await holding
    await settle()
    assert await free_slots(c.slots) == 1
    async with c.slot("s"):
        assert await free_slots(c.slots) == 0
