"""The layer rule, read from the source: who may import the SDK, pygls, and whom.

- `services/` imports neither pygls/lsprotocol nor the MCP SDK; `handlers/` not the SDK;
- only `connections/` and `auth/` import the SDK (`demo/` is an MCP server of its own), and
  `gateway/`, the MCP server face, which calls the services and never the connections, the
  editor's handlers or pygls (the SDK's private API it needs comes from `connections/sdk_shim.py`,
  the one module of `connections/` it may import, which imports nothing of ours);
- `protocol/` imports nothing of ours outside itself;
- `operations/`, the operation table the fronts are built from, reaches only the services,
  `output/` and `protocol/`; no layer below the fronts (services, connections, catalog, config)
  imports it;
- `output/` renders typed results: it never reaches the services, handlers, connections, the
  gateway or the server (nor the SDK or pygls), and the services hold no rendering of their own
  (no `render`/`*_text` function, no row glyph: they call `output/` where they build a result);
- no import cycles between modules of `mcp_sidecar`, function-level imports included
  (imports under `if TYPE_CHECKING:` are for annotations only and are left out).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "sidecar" / "mcp_sidecar"
SDK = ("mcp", "mcp_types")
EDITOR_PROTOCOL = ("pygls", "lsprotocol")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk_runtime(node: ast.AST) -> Iterator[ast.AST]:
    """Every node, skipping the bodies of `if TYPE_CHECKING:` (their `else` still runs)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child):
            for other in child.orelse:
                yield other
                yield from _walk_runtime(other)
            continue
        yield child
        yield from _walk_runtime(child)


def imports_of(source: str, module: str, is_package: bool = False) -> set[str]:
    """Absolute names of every module `source` imports at run time (at any depth)."""
    found: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in _walk_runtime(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                prefix = ".".join(base)
                target = f"{prefix}.{node.module}" if node.module else prefix
            else:
                target = node.module or ""
            found.add(target)
            # `from mcp_sidecar.services import status` imports the module `...services.status`.
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported = imports_of(path.read_text(encoding="utf-8"), name, path.name == "__init__.py")
        edges[name] = {m for m in imported if m in modules and m != name}
    return edges


def all_imports() -> dict[str, set[str]]:
    return {
        module_name(p): imports_of(p.read_text(encoding="utf-8"), module_name(p), p.name == "__init__.py")
        for p in PACKAGE.rglob("*.py")
    }


def _top(name: str) -> str:
    return name.split(".")[0]


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(edges.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return seen


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (components of two or more)."""
    reach = {node: reachable(edges, node) for node in edges}
    groups = {
        frozenset({node} | {other for other in reach[node] if node in reach.get(other, set())})
        for node in edges
        if node in reach[node]
    }
    return sorted(sorted(group) for group in groups if len(group) > 1)


def _layer(module: str) -> str:
    """`services` for `mcp_sidecar.services.x`; a top-level module is its own layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_the_checker_sees_imports_cycles_and_skips_type_checking_blocks() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import mcp\n"
        "from . import sibling\n"
        "if TYPE_CHECKING:\n"
        "    from pygls.server import LanguageServer\n"
        "def later():\n"
        "    from mcp_types import Tool\n"
    )
    found = imports_of(source, "mcp_sidecar.services.x")
    assert {"mcp", "mcp_sidecar.services.sibling", "mcp_types"} <= found
    assert not any(name.startswith("pygls") for name in found)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [("services", SDK + EDITOR_PROTOCOL), ("handlers", SDK), ("catalog", SDK + EDITOR_PROTOCOL)],
)
def test_layers_do_not_import_what_they_must_not(layer: str, forbidden: tuple[str, ...]) -> None:
    offenders = {
        module: sorted(m for m in imported if _top(m) in forbidden)
        for module, imported in all_imports().items()
        if _layer(module) == layer
    }
    assert {m: found for m, found in offenders.items() if found} == {}


def test_only_connections_and_auth_import_the_sdk() -> None:
    allowed = {"connections", "auth", "demo", "gateway"}
    offenders = {
        module: sorted(m for m in imported if _top(m) in SDK)
        for module, imported in all_imports().items()
        if _layer(module) not in allowed
    }
    assert {m: found for m, found in offenders.items() if found} == {}


SDK_SHIM = "mcp_sidecar.connections.sdk_shim"


def test_the_gateway_goes_through_the_services() -> None:
    """The MCP face needs no pygls (its memory goal), and no connection is driven from it."""
    banned = ("mcp_sidecar.connections", "mcp_sidecar.handlers", "mcp_sidecar.server", "mcp_sidecar.pygls_shim")
    offenders = {
        module: sorted(
            m for m in imported if _top(m) in EDITOR_PROTOCOL or (m.startswith(banned) and not m.startswith(SDK_SHIM))
        )
        for module, imported in all_imports().items()
        if _layer(module) == "gateway"
    }
    assert {m: found for m, found in offenders.items() if found} == {}
    edges = graph()
    for module in [m for m in edges if _layer(m) == "gateway"]:
        assert "mcp_sidecar.server" not in reachable(edges, module)


@pytest.mark.parametrize("shim", [SDK_SHIM, "mcp_sidecar.pygls_shim"])
def test_the_shims_import_nothing_of_ours(shim: str) -> None:
    """What may import a shim (the gateway the SDK's) reaches nothing else through it."""
    assert sorted(m for m in all_imports()[shim] if _top(m) == "mcp_sidecar") == []


def test_protocol_imports_nothing_of_ours_outside_itself() -> None:
    offenders = {
        module: sorted(m for m in imported if m.startswith("mcp_sidecar.") and not m.startswith("mcp_sidecar.protocol"))
        for module, imported in all_imports().items()
        if _layer(module) == "protocol"
    }
    assert {m: found for m, found in offenders.items() if found} == {}


OPERATIONS_MAY_IMPORT = tuple(f"mcp_sidecar.{name}" for name in ("operations", "services", "output", "protocol"))


def test_operations_reach_only_services_output_and_protocol() -> None:
    offenders = {
        module: sorted(m for m in imported if _top(m) == "mcp_sidecar" and not m.startswith(OPERATIONS_MAY_IMPORT))
        for module, imported in all_imports().items()
        if _layer(module) == "operations"
    }
    assert offenders, "no operations/ modules found"
    assert {m: found for m, found in offenders.items() if found} == {}


@pytest.mark.parametrize("layer", ["services", "connections", "catalog", "config"])
def test_the_layers_below_the_fronts_do_not_import_the_operation_table(layer: str) -> None:
    offenders = {
        module: sorted(m for m in imported if m.startswith("mcp_sidecar.operations"))
        for module, imported in all_imports().items()
        if _layer(module) == layer
    }
    assert offenders, f"no {layer}/ modules found"
    assert {m: found for m, found in offenders.items() if found} == {}


OUTPUT_MUST_NOT_REACH = tuple(
    f"mcp_sidecar.{name}" for name in ("services", "handlers", "connections", "gateway", "server", "cli", "pygls_shim")
)


def test_output_renders_results_and_calls_nothing() -> None:
    offenders = {
        module: sorted(m for m in imported if m.startswith(OUTPUT_MUST_NOT_REACH) or _top(m) in SDK + EDITOR_PROTOCOL)
        for module, imported in all_imports().items()
        if _layer(module) == "output"
    }
    assert {m: found for m, found in offenders.items() if found} == {}


ROW_GLYPHS = frozenset("✔✘○●·↻⚿▶")
"""The marks that start or separate the rows of a text rendering (`output/`)."""


def renderings(source: str) -> list[str]:
    """What in `source` renders text: functions named `render...`/`..._text`, strings holding a row glyph."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = node.name.lstrip("_")
            if name == "render" or name.startswith("render_") or name.endswith("_text"):
                found.append(f"def {node.name}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ROW_GLYPHS & set(node.value):
            found.append(f"line {node.lineno}: {node.value[:40]!r}")
    return found


def test_the_checker_sees_renderings() -> None:
    source = (
        "def _render(r):\n"
        "    return f' ✔ {r}'\n"
        "async def render_rows(): ...\n"
        "def directory_text(): ...\n"
        "def rendered(): return 'a — b…'\n"
    )
    assert sorted(renderings(source)) == ["def _render", "def directory_text", "def render_rows", "line 2: ' ✔ '"]


def test_services_leave_rendering_to_output() -> None:
    offenders = {
        module_name(path): found
        for path in (PACKAGE / "services").rglob("*.py")
        if (found := renderings(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_no_import_cycles() -> None:
    assert cycles(graph()) == []


def test_the_result_types_are_imported_for_type_checking_only() -> None:
    """protocol/results.py costs start-up time (dozens of TypedDicts) and no code needs it at run time."""
    runtime = {module for module, imported in all_imports().items() if "mcp_sidecar.protocol.results" in imported}
    assert {m for m in runtime if not m.startswith("mcp_sidecar.protocol")} == set()


CONTAINER = "mcp_sidecar.services.app"
"""Where `Sidecar`, the container, is built: the composition root."""
FRONTS = (
    "handlers",
    "operations",
    "gateway",
    "cli",
    "cli_app",
    "cli_auth",
    "cli_conformance",
    "cli_elicit",
    "server",
    "engine",
)
"""The fronts hold the container and hand each feature call what it needs; nothing below them names it."""


def container_users() -> set[str]:
    """Modules that import the container module, type-checking blocks included."""
    users = set()
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if _imports_container(node):
                users.add(module)
    return users


def _imports_container(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module == CONTAINER
    return isinstance(node, ast.Import) and any(alias.name == CONTAINER for alias in node.names)


def test_only_the_fronts_name_the_container() -> None:
    """Issue 32: no service takes `app: Sidecar`; a feature's signature shows what it uses."""
    fronts = {f"mcp_sidecar.{front}" for front in FRONTS}
    named = {m for m in container_users() if m != CONTAINER and m not in fronts and _top_part(m) not in fronts}
    assert named == set()
    assert "mcp_sidecar.handlers.registry" in container_users()  # the checker sees a type-checking import


def _top_part(module: str) -> str:
    return ".".join(module.split(".")[:2])


PER_USER = tuple(
    f"mcp_sidecar.services.{name}"
    for name in ("user_state", "catalogs", "encodings", "credentials", "questions", "fronts")
)
"""What every client of the process shares (issue 32 item 1); below services/, the registry, the
connections, catalog/ and config/ are the user's too and import no service at all."""
PER_CLIENT = tuple(
    f"mcp_sidecar.services.{name}"
    for name in (
        "client_context",
        "configuration",
        "sessions",
        "prompts",
        "watches",
        "roots",
        "offers",
        "notifier",
        "auth",
        "status",
        "lifecycle",
        "approvals",
        "activation",
        "discovery",
        "reading",
        "apps",
        "app_pages",
        "completion",
        "model_tool",
        "background",
        "exposure",
        "commands",
        "profiles",
        "config_edits",
        "config_imports",
        "app",
    )
)
"""One client's state and the features built on it."""


def _named_imports(module: str) -> set[str]:
    """Every module `module` imports, type-checking blocks included (a type names a scope too)."""
    path = PACKAGE / (module.removeprefix("mcp_sidecar.").replace(".", "/") + ".py")
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("module", PER_USER)
def test_the_users_state_imports_no_clients(module: str) -> None:
    """A client holds the user's state, never the other way round: what is shared names no client's part."""
    named = _named_imports(module) | reachable(graph(), module)
    assert sorted(named & set(PER_CLIENT)) == []


def test_every_service_has_a_scope() -> None:
    """A new service module says whose it is (or it is a helper with no state of its own)."""
    helpers = {"app", "budget", "command_line", "command_spec", "config_watch", "progress"}
    services = {p.stem for p in (PACKAGE / "services").glob("*.py")} - {"__init__"}
    scoped = {m.rpartition(".")[2] for m in PER_USER + PER_CLIENT}
    assert sorted(services - scoped - helpers) == []
