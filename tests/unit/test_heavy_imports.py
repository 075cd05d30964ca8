"""The owner of the heavy imports (`heavy.py`) and every lazy import of a heavy module.

A heavy package (the SDK, numpy, keyring, and what they bring: pydantic, httpx2, anyio,
cryptography) imported on two threads at once can hand one of them a half-initialised module.
`heavy.Load` imports each in one thread, once; everything else awaits it. The audit below lists
every function-level import of a heavy module (or of one of our modules that imports one at its
top) and says why it cannot run beside a load: a new one fails the test until it is routed
through the owner or its reason is written down here.
"""

from __future__ import annotations

import ast
import asyncio
import threading
from collections.abc import Iterator

import pytest

from mcp_sidecar import heavy
from unit.test_layers import PACKAGE, _is_type_checking, module_name

# -- the owner -------------------------------------------------------------------------------


def recording_load(name: str, runs: list[str], gate: threading.Event | None = None) -> heavy.Load:
    def importer() -> heavy.Importer:
        def run() -> None:
            runs.append(threading.current_thread().name)
            if gate is not None and not gate.wait(30):
                raise TimeoutError("the test never opened the gate")

        return run

    return heavy.Load(name, importer)


async def test_a_load_runs_once_in_the_import_thread_for_every_waiter() -> None:
    runs: list[str] = []
    gate = threading.Event()
    load = recording_load("one", runs, gate)
    waiters = [asyncio.ensure_future(load.ready()) for _ in range(20)]
    await asyncio.sleep(0)
    assert not load.loaded
    gate.set()
    await asyncio.wait_for(asyncio.gather(*waiters), 30)
    assert runs == ["mcp-sidecar-imports"]
    assert load.loaded


async def test_a_cancelled_waiter_does_not_cancel_the_load() -> None:
    runs: list[str] = []
    gate = threading.Event()
    load = recording_load("cancelled", runs, gate)
    first = asyncio.ensure_future(load.ready())
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    gate.set()
    await asyncio.wait_for(load.ready(), 30)
    assert runs == ["mcp-sidecar-imports"]
    assert load.loaded


async def test_loads_run_one_after_the_other() -> None:
    runs: list[str] = []
    order: list[str] = []
    gate = threading.Event()
    first = recording_load("first", runs, gate)

    def second_importer() -> heavy.Importer:
        return lambda: order.append("second ran after first" if first.loaded or runs else "second ran alone")

    second = heavy.Load("second", second_importer)
    started = [asyncio.ensure_future(first.ready()), asyncio.ensure_future(second.ready())]
    await asyncio.sleep(0.05)
    assert order == []  # the one thread is still inside the first load
    gate.set()
    await asyncio.wait_for(asyncio.gather(*started), 30)
    assert order == ["second ran after first"]


async def test_a_failed_load_fails_every_waiter_and_is_not_loaded() -> None:
    def importer() -> heavy.Importer:
        def run() -> None:
            raise ImportError("no such package")

        return run

    load = heavy.Load("broken", importer)
    results = await asyncio.gather(load.ready(), load.ready(), return_exceptions=True)
    assert [type(r) for r in results] == [ImportError, ImportError]
    assert not load.loaded


async def test_waiting_for_a_load_from_the_import_thread_is_refused() -> None:
    inner = recording_load("inner", [])

    def importer() -> heavy.Importer:
        return lambda: inner.wait(5)

    outer = heavy.Load("outer", importer)
    with pytest.raises(RuntimeError, match="cannot be waited for from the import thread"):
        await asyncio.wait_for(outer.ready(), 30)


# -- the audit -------------------------------------------------------------------------------

HEAVY = ("mcp", "mcp_types", "numpy", "pydantic", "pydantic_core", "httpx2", "anyio", "keyring", "cryptography")

AFTER_SESSION = "runs on an open session: the connection awaited heavy.SDK before opening it"
AFTER_LOAD_SDK = "runs after the connection's `await load_sdk()` (heavy.SDK)"
RANKING = "ranking code: its callers awaited heavy.NUMPY (Catalogs.ready_to_rank) or checked heavy.NUMPY.loaded"
SDK_CLASSIFIED = "looked at only when heavy.SDK.loaded (_classify_leaf)"
AFTER_LOGIN_AWAIT = "called only from services/auth.py and credentials.py functions that awaited heavy.SDK first"
GATEWAY = "the gateway imports the SDK at its top, before its event loop runs"
OWNER = "the owner's own loads"
SDK_OWNER_AWAITS = "awaits or waits for its owner (checked below)"

REASONS: dict[str, str] = {
    # module (or module:function) -> why the import cannot run beside a heavy load
    "mcp_sidecar.heavy": OWNER,
    "mcp_sidecar.connections.sdk_import": OWNER,
    "mcp_sidecar.connections.client_hooks": AFTER_SESSION,
    "mcp_sidecar.connections.content_requests": AFTER_SESSION,
    "mcp_sidecar.connections.listing": AFTER_SESSION,
    "mcp_sidecar.connections.live_session": AFTER_SESSION,
    "mcp_sidecar.connections.task_calls": AFTER_SESSION,
    "mcp_sidecar.connections.watch_requests": AFTER_SESSION,
    "mcp_sidecar.connections.watch_stream": AFTER_SESSION,
    "mcp_sidecar.connections.sdk_streams": AFTER_SESSION,
    "mcp_sidecar.connections.connection:_hold": AFTER_LOAD_SDK,
    "mcp_sidecar.connections.transports": AFTER_LOAD_SDK,
    "mcp_sidecar.connections.stdio_pipes": AFTER_LOAD_SDK,
    "mcp_sidecar.connections.errors": SDK_CLASSIFIED,
    "mcp_sidecar.connections.templates": SDK_OWNER_AWAITS,
    "mcp_sidecar.auth.store": SDK_OWNER_AWAITS,
    "mcp_sidecar.auth.failures": AFTER_LOGIN_AWAIT,
    "mcp_sidecar.auth.dpop": "cryptography comes with the SDK, and DPoP runs in logins and connections, after it",
    "mcp_sidecar.services.auth:login": SDK_OWNER_AWAITS,
    "mcp_sidecar.services.auth:complete_login": SDK_OWNER_AWAITS,
    "mcp_sidecar.services.auth:logout": SDK_OWNER_AWAITS,
    "mcp_sidecar.services.auth": AFTER_LOGIN_AWAIT,
    "mcp_sidecar.services.credentials:connection_auth": SDK_OWNER_AWAITS,
    "mcp_sidecar.services.credentials": AFTER_LOGIN_AWAIT,
    "mcp_sidecar.catalog.index": RANKING,
    "mcp_sidecar.catalog.hybrid": RANKING,
    "mcp_sidecar.catalog.semantic": RANKING,
    "mcp_sidecar.catalog.encoder": RANKING,  # numpy, once ranking awaited it; onnxruntime after heavy.ENCODER
    "mcp_sidecar.catalog.stored_index": RANKING,
    "mcp_sidecar.catalog.token_count": "the counter is built by Catalogs.token_counter, after heavy.NUMPY.ready()",
    "mcp_sidecar.json_depth:structure": RANKING,
    "mcp_sidecar.json_depth:prune": "only by stdio_pipes.pruned_message, after heavy.NUMPY.wait()",
    "mcp_sidecar.cli_conformance": "a login's headless browser: the login awaited heavy.SDK",
    "mcp_sidecar.cli:main": "imported synchronously at start, before any thread",
    "mcp_sidecar.entry:main": "imported synchronously at start, before any thread",
    "mcp_sidecar.gateway.forwarding": GATEWAY,
    "mcp_sidecar.gateway.run": GATEWAY,
    "mcp_sidecar.demo.server": "the demo MCP server's own process",
}


def _top_imports(tree: ast.Module) -> set[str]:
    found: set[str] = set()

    def walk(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                walk(node.orelse)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If | ast.Try):
                walk([*node.body, *node.orelse, *getattr(node, "finalbody", [])])

    walk(tree.body)
    return found


def _trees() -> dict[str, ast.Module]:
    return {module_name(p): ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py")}


def _heavy_closure(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Our module -> the heavy packages it imports at its top, directly or through our modules."""
    tops = {name: _top_imports(tree) for name, tree in trees.items()}
    memo: dict[str, set[str]] = {}

    def visit(name: str, seen: frozenset[str]) -> set[str]:
        if name in memo:
            return memo[name]
        found: set[str] = set()
        for target in tops.get(name, ()):
            if target.split(".")[0] in HEAVY:
                found.add(target.split(".")[0])
            elif target in tops and target not in seen:
                found |= visit(target, seen | {name})
        memo[name] = found
        return found

    return {name: visit(name, frozenset()) for name in tops}


def _function_imports(tree: ast.Module) -> Iterator[tuple[ast.AST, ast.Import | ast.ImportFrom]]:
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield function, node


def _targets(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level or not node.module:
        return []
    return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def lazy_heavy_imports() -> list[tuple[str, str, int, ast.AST]]:
    """(module, function, line, function node) of every function-level import that is heavy."""
    trees = _trees()
    closure = _heavy_closure(trees)
    found: list[tuple[str, str, int, ast.AST]] = []
    for name, tree in trees.items():
        skipped = _type_checking_lines(tree)
        for function, node in _function_imports(tree):
            if node.lineno in skipped:
                continue
            heavy_here = any(t.split(".")[0] in HEAVY or closure.get(t) for t in _targets(node))
            if heavy_here:
                assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
                found.append((name, function.name, node.lineno, function))
    return found


def _awaits_owner_before(function: ast.AST, line: int) -> bool:
    """A `heavy.X.ready()` / `heavy.X.wait()` call in `function` before `line`."""
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("ready", "wait")
            and isinstance(node.func.value, ast.Attribute)
            and isinstance(node.func.value.value, ast.Name)
            and node.func.value.value.id == "heavy"
            and node.lineno < line
        ):
            return True
    return False


def test_the_audit_sees_lazy_heavy_imports() -> None:
    found = {(module, function) for module, function, _, _ in lazy_heavy_imports()}
    assert ("mcp_sidecar.services.auth", "login") in found  # through mcp_sidecar.auth.login
    assert ("mcp_sidecar.connections.templates", "expand") in found
    assert ("mcp_sidecar.catalog.index", "arrays") in found  # numpy


def test_every_lazy_heavy_import_cannot_run_beside_a_load() -> None:
    unexplained, unchecked = [], []
    for module, function, line, node in lazy_heavy_imports():
        reason = REASONS.get(f"{module}:{function}") or REASONS.get(module)
        if reason is None:
            unexplained.append(f"{module}:{function} (line {line})")
        elif reason == SDK_OWNER_AWAITS and not _awaits_owner_before(node, line):
            unchecked.append(f"{module}:{function} (line {line}) imports before awaiting its owner")
    assert unexplained == []
    assert unchecked == []
