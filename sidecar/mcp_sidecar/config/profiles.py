"""Profiles: named sets of the servers a client searches and the tools it starts with active.

`"profiles": {"review": {"servers": ["github", "linear"], "activate": ["github.list_pull_requests"]}}`
in the global file or a trusted project file. A project profile replaces a same-named global one
whole, as a project server definition does; an untrusted project file is never read, so its
profiles are never used. A profile is per client (one editor window, one gateway host, one CLI
run): choosing one changes nothing for another client.

Problems are sentences naming the file, the profile and the field (and the missing server or
tool, both names a file chose, shown only when they look like names: `validate.shown_name`).
An invalid profile is left out on its own, and never makes the servers' definitions invalid:
the servers keep working while a profile names one that is gone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config.model import Scope
from mcp_sidecar.config.validate import SERVER_NAME, ConfigProblems, shown_name

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import ProfileJson

PROFILE_FIELDS = frozenset({"description", "servers", "activate"})
APPROVAL_PREFIX = "profile:"
"""A project profile's key in the approvals record and in `pendingApprovals` (`profile:review`): a
server name has no `:`, so the two never meet."""


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    scope: Scope
    source: str
    """The file that defines it."""
    servers: tuple[str, ...] | None = None
    """The servers searched and listed for a client with this profile; None: every server."""
    activate: tuple[str, ...] = ()
    """Exact tool ids (`server.tool`) activated when the profile is chosen."""
    description: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The definition as written, for the approval hash."""
    approval_required: bool = False
    """A project profile that is new or changed since the person approved it: not usable until approved."""

    def searches(self, server: str) -> bool:
        return self.servers is None or server in self.servers

    def to_json(self) -> ProfileJson:
        return {
            "name": self.name,
            "scope": self.scope,
            "description": self.description,
            "servers": list(self.servers) if self.servers is not None else None,
            "activate": list(self.activate),
            "approvalRequired": self.approval_required,
        }


@dataclass(slots=True)
class ProfilesRead:
    """One file's profiles: the valid ones, a sentence per problem (each naming the file), and the
    names of the invalid ones (a project's invalid profile still hides the same-named global one)."""

    profiles: dict[str, Profile] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    broken: set[str] = field(default_factory=set)


def parse_profiles(document: Any, scope: Scope, source: str) -> ProfilesRead:
    found = document.get("profiles", {}) if isinstance(document, Mapping) else {}
    if not isinstance(found, Mapping):
        return ProfilesRead(problems=[f"{source}: `profiles` must be a JSON object of named profiles."])
    read = ProfilesRead()
    for name, definition in found.items():
        try:
            read.profiles[name] = parse_profile(name, definition, scope, source)
        except ConfigProblems as exc:
            read.problems += [f"{source}: {p}" for p in exc.problems]
            read.broken.add(name)
    return read


def parse_profile(name: Any, definition: Any, scope: Scope, source: str) -> Profile:
    where = f"profile {name!r}" if isinstance(name, str) and SERVER_NAME.match(name) else "a profile"
    if not isinstance(name, str) or not SERVER_NAME.match(name):
        shown = shown_name(name) if isinstance(name, str) else ""
        raise ConfigProblems(
            [f"profile {shown}: the name must be 1 to 64 letters, digits, `_` or `-` (no dots or spaces)."]
        )
    if not isinstance(definition, Mapping):
        raise ConfigProblems([f"{where}: the definition must be a JSON object."])
    problems = [
        f"{where}: field {shown_name(k)} is not a supported field." for k in definition if k not in PROFILE_FIELDS
    ]
    servers = definition.get("servers")
    if servers is not None and not (
        isinstance(servers, list) and servers and all(isinstance(s, str) and SERVER_NAME.match(s) for s in servers)
    ):
        problems.append(f"{where}: field `servers` must be a non-empty list of server names.")
    elif servers is not None and len(set(servers)) != len(servers):
        problems.append(f"{where}: field `servers` must not repeat a server.")
    activate = definition.get("activate", [])
    if not (isinstance(activate, list) and all(isinstance(i, str) and "." in i.strip(".") for i in activate)):
        problems.append(f"{where}: field `activate` must be a list of exact tool ids (server.tool).")
    description = definition.get("description")
    if description is not None and not isinstance(description, str):
        problems.append(f"{where}: field `description` must be a string.")
    if problems:
        raise ConfigProblems(problems)
    return Profile(
        name=name,
        scope=scope,
        source=source,
        servers=tuple(servers) if servers is not None else None,
        activate=tuple(dict.fromkeys(activate)),
        description=description,
        raw=dict(definition),
    )


_SHOWN_ID = re.compile(r"^[A-Za-z0-9_.-]{1,129}\Z")


def _shown_id(tool_id: str) -> str:
    """A tool id as written when it looks like one (`server.tool`), else how long it is."""
    return repr(tool_id) if _SHOWN_ID.match(tool_id) else f"with a {len(tool_id)}-character id (not shown)"


def server_of(tool_id: str, servers: Collection[str]) -> str | None:
    """The configured server an exact id `server.tool` names (the longest that fits), if any."""
    fitting = [s for s in servers if tool_id.startswith(s + ".") and len(tool_id) > len(s) + 1]
    return max(fitting, key=len) if fitting else None


def check_servers(profile: Profile, configured: Collection[str]) -> list[str]:
    """A profile's problems against the merged configuration: a server it names that is not configured,
    a tool whose server is not configured or not among the profile's servers."""
    where = f"{profile.source}: profile {profile.name!r}"
    problems = [
        f"{where}: `servers` names server {shown_name(s)}, which is not configured."
        for s in profile.servers or ()
        if s not in configured
    ]
    for tool_id in profile.activate:
        server = server_of(tool_id, configured)
        if server is None:
            problems.append(f"{where}: `activate` names tool {_shown_id(tool_id)}, whose server is not configured.")
        elif not profile.searches(server):
            problems.append(
                f"{where}: `activate` names tool {_shown_id(tool_id)}, whose server {server!r} is not in `servers`."
            )
    return problems


def approval_key(name: str) -> str:
    return f"{APPROVAL_PREFIX}{name}"


def profile_of_key(key: str) -> str | None:
    return key[len(APPROVAL_PREFIX) :] if key.startswith(APPROVAL_PREFIX) else None
