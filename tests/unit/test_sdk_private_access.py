"""No module of the sidecar but `connections/sdk_shim.py` touches the MCP SDK's private API.

`tests/unit/connections/test_sdk_shim.py` pins what the shim uses on the installed SDK; this scan keeps every
other module from growing a use that pin cannot see. Read from the source (and, for the classes
built on the SDK's, the classes themselves), it refuses, outside the shim:

- importing an underscore name of the SDK, or from one of its underscore modules;
- in a class built on an SDK class (directly or through ours): defining a member whose name is a
  private member of an SDK class above it (an override, or a shadowing), `super()._anything`, and
  `self._x` / `cls._x` where `_x` is one of the SDK's;
- reaching an underscore name by reflection (`getattr(x, "_y")`, `vars(x)["_y"]`, ...);
- silencing ruff's private-member rule (`SLF001`, which covers `x._y` on any other object) in any
  module but the two shims.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from unit.test_layers import PACKAGE, module_name

SDK = ("mcp", "mcp_types")
SHIM = PACKAGE / "connections" / "sdk_shim.py"
PYGLS_SHIM = PACKAGE / "pygls_shim.py"
ROOT = PACKAGE.parents[1]
REFLECTION = frozenset({"getattr", "setattr", "hasattr", "delattr"})
NOT_THE_SDKS = frozenset({"_abc_impl"})
"""Set on every subclass of an ABC by `abc` itself, ours included."""


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_sdk(thing: object) -> bool:
    return str(getattr(thing, "__module__", "")).split(".")[0] in SDK


@dataclass(frozen=True, order=True)
class Use:
    line: int
    what: str


# -- imports ---------------------------------------------------------------------------------------


def _imported(tree: ast.Module) -> dict[str, str]:
    """Every name an absolute import binds, anywhere in the module, and the dotted path it names."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def private_imports(tree: ast.Module) -> list[Use]:
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            paths = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            paths = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for path in paths:
            if path.split(".")[0] in SDK and any(_private(part) for part in path.split(".")):
                uses.append(Use(node.lineno, f"imports {path}"))
    return uses


# -- classes built on the SDK's --------------------------------------------------------------------


def _resolve(path: str) -> object | None:
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute, None)
        return found
    return None


def _evaluate(expression: ast.expr, namespace: dict[str, object], imported: dict[str, str]) -> object | None:
    """The object a base-class expression names (`Client`, `mcp.Client`, `Server[Any]`), if it can be found."""
    if isinstance(expression, ast.Subscript):
        return _evaluate(expression.value, namespace, imported)
    if isinstance(expression, ast.Name):
        if expression.id in namespace:
            return namespace[expression.id]
        return _resolve(imported[expression.id]) if expression.id in imported else None
    if isinstance(expression, ast.Attribute):
        owner = _evaluate(expression.value, namespace, imported)
        return getattr(owner, expression.attr, None) if owner is not None else None
    return None


def sdk_private_members(bases: list[type]) -> dict[str, str]:
    """Private member -> `Owner._member`, for every SDK class in the bases' MROs: what it defines,
    and every `self._x` its source uses (instance attributes are set in methods)."""
    members: dict[str, str] = {}
    for base in bases:
        for cls in base.__mro__:
            if not _is_sdk(cls):
                continue
            names = {name for name in vars(cls) if _private(name)}
            with contextlib.suppress(OSError, TypeError):  # no source to read (a builtin's)
                names |= set(re.findall(r"self\.(_[A-Za-z]\w*)", inspect.getsource(cls)))
            for name in names - NOT_THE_SDKS:
                if _private(name):
                    members.setdefault(name, f"{cls.__name__}.{name}")
    return members


def _class_uses(node: ast.ClassDef, members: dict[str, str]) -> list[Use]:
    uses = []
    for item in node.body:
        defined = [item.name] if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) else []
        if isinstance(item, ast.Assign | ast.AnnAssign):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            defined = [t.id for t in targets if isinstance(t, ast.Name)]
        uses += [Use(item.lineno, f"{node.name} overrides {members[n]}") for n in defined if n in members]
    for inner in ast.walk(node):
        if not isinstance(inner, ast.Attribute) or not _private(inner.attr):
            continue
        value = inner.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
            uses.append(Use(inner.lineno, f"{node.name} calls super().{inner.attr}"))
        elif isinstance(value, ast.Name) and value.id in ("self", "cls") and inner.attr in members:
            uses.append(Use(inner.lineno, f"{node.name} uses {value.id}.{inner.attr} ({members[inner.attr]})"))
    return uses


def subclass_uses(tree: ast.Module, namespace: dict[str, object]) -> list[Use]:
    imported = _imported(tree)
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [b for b in (_evaluate(e, namespace, imported) for e in node.bases) if isinstance(b, type)]
            members = sdk_private_members(bases)
            if members:
                uses += _class_uses(node, members)
    return uses


# -- reflection ------------------------------------------------------------------------------------


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def reflection(tree: ast.Module) -> list[Use]:
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REFLECTION:
            name = _literal(node.args[1]) if len(node.args) > 1 else None
            if name is not None and _private(name):
                uses.append(Use(node.lineno, f"{node.func.id}(..., {name!r})"))
        elif isinstance(node, ast.Subscript) and (key := _literal(node.slice)) is not None and _private(key):
            value = node.value
            by_vars = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "vars"
            if by_vars or (isinstance(value, ast.Attribute) and value.attr == "__dict__"):
                uses.append(Use(node.lineno, f"[{key!r}] of an object's attributes"))
    return uses


# -- the scan --------------------------------------------------------------------------------------


def private_uses(source: str, namespace: dict[str, object]) -> list[Use]:
    tree = ast.parse(source)
    return sorted(private_imports(tree) + subclass_uses(tree, namespace) + reflection(tree))


def _module(path: Path) -> ModuleType | None:
    name = module_name(path)
    return None if name.endswith("__main__") else importlib.import_module(name)


def scan(path: Path) -> list[Use]:
    module = _module(path)
    return private_uses(path.read_text(encoding="utf-8"), vars(module) if module is not None else {})


def test_the_scan_sees_each_kind_of_use() -> None:
    source = (
        "from mcp import Client\n"
        "from mcp.shared._httpx_utils import RedirectAwareAuth\n"
        "from mcp.client.auth.oauth2 import _origin_issuer as issuer\n"
        "import mcp.client._probe\n"
        "class Mine(Client):\n"
        "    _response_cache = None\n"
        "    async def _build_session(self, stack):\n"
        "        return await super()._build_session(stack)\n"
        "    def _own(self):\n"
        "        return self._session, self._mine\n"
        "def hooked(session):\n"
        "    from mcp.client.session import ClientSession\n"
        "    class Inner(ClientSession):\n"
        "        def _build_capabilities(self, version): ...\n"
        "    getattr(session, '_dispatcher')\n"
        "    vars(session)['_dispatcher']\n"
        "    return session.__dict__['_x']\n"
    )
    assert [use.what for use in private_uses(source, {})] == [
        "imports mcp.shared._httpx_utils.RedirectAwareAuth",
        "imports mcp.client.auth.oauth2._origin_issuer",
        "imports mcp.client._probe",
        "Mine overrides Client._response_cache",
        "Mine overrides Client._build_session",
        "Mine calls super()._build_session",
        "Mine uses self._session (Client._session)",
        "Inner overrides ClientSession._build_capabilities",
        "getattr(..., '_dispatcher')",
        "['_dispatcher'] of an object's attributes",
        "['_x'] of an object's attributes",
    ]


def test_the_scan_sees_what_the_shim_does() -> None:
    """The shim itself is where every use is: the scan finds each kind there."""
    found = {use.what for use in scan(SHIM)}
    assert {
        "imports mcp.client.auth.oauth2._origin_issuer",
        "_AnnouncingClient overrides Client._build_session",
        "_AnnouncingClient calls super()._build_session",
        "OAuthSteps overrides OAuthClientProvider._auth_flow",
        "OAuthSteps calls super()._refresh_token",
        "OAuthSteps uses self._initialized (OAuthClientProvider._initialized)",
        "SessionManagerHooks overrides StreamableHTTPSessionManager._admit_session",
        "SessionManagerHooks uses self._server_instances (StreamableHTTPSessionManager._server_instances)",
    } <= found


def test_a_class_built_on_the_shims_is_held_to_the_sdks_names() -> None:
    """Through `OAuthSteps`, `SidecarOAuth` is an SDK provider: its own private names must not be the SDK's."""
    from mcp_sidecar.auth.provider import SidecarOAuth

    members = sdk_private_members([SidecarOAuth])
    assert "_initialize" in members
    assert "_initialized" in members
    source = (
        "from mcp_sidecar.auth.provider import SidecarOAuth\n"
        "class Again(SidecarOAuth):\n"
        "    async def _initialize(self): ...\n"
    )
    assert [use.what for use in private_uses(source, {})] == ["Again overrides OAuthClientProvider._initialize"]


def test_no_module_but_the_shim_uses_the_sdks_private_api() -> None:
    found = {
        module_name(path): [f"line {use.line}: {use.what}" for use in scan(path)]
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != SHIM
    }
    assert {module: uses for module, uses in found.items() if uses} == {}, (
        "the SDK's private API is used only in connections/sdk_shim.py: add what is needed there, "
        "under a public name, and pin it in tests/unit/connections/test_sdk_shim.py"
    )


def test_the_private_member_rule_is_silenced_only_for_the_shims() -> None:
    silenced = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"noqa:[^#]*\bSLF001\b", line)
    ]
    assert silenced == []
    ignores = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"][
        "per-file-ignores"
    ]
    ours = sorted(pattern for pattern, rules in ignores.items() if "SLF001" in rules and pattern.startswith("sidecar/"))
    assert ours == sorted(str(shim.relative_to(ROOT)) for shim in (SHIM, PYGLS_SHIM))
