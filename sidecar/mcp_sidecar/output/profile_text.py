"""The text of `mcp/profile` (`/mcp profile`, the CLI's `run 'profile ...'`): the client's profile,
what choosing it did, and the profiles it can choose."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_sidecar.output.sanitize import one_line

if TYPE_CHECKING:
    from mcp_sidecar.protocol.errors import DiagnosticJson
    from mcp_sidecar.protocol.results import ActivateResult, ProfileJson


def describe(profile: ProfileJson) -> str:
    """`review: searches github, linear; activates github.list_pull_requests`."""
    servers = profile["servers"]
    parts = [f"searches {', '.join(servers)}" if servers is not None else "searches every server"]
    if profile["activate"]:
        parts.append(f"activates {', '.join(profile['activate'])}")
    if profile["approvalRequired"]:
        parts.append("waits for approval")
    described = f" ({profile['description']})" if profile["description"] else ""
    return one_line(f"{profile['name']} [{profile['scope']}]{described}: {'; '.join(parts)}")


def render(
    chosen: str | None,
    profiles: list[ProfileJson],
    activation: ActivateResult | None,
    deactivated: list[str],
    diagnostics: list[DiagnosticJson],
) -> str:
    lines = [f"Profile: {one_line(chosen)}" if chosen is not None else "Profile: none (every server is searched)"]
    if activation is not None:
        loaded = [r["id"] for r in activation["results"] if r["status"] != "not loaded"]
        if loaded:
            lines.append(f"Active in session {activation['session']!r}: {one_line(', '.join(loaded))}")
    if deactivated:
        lines.append(f"Deactivated (not in the profile): {one_line(', '.join(deactivated))}")
    lines += [f"! {one_line(d['message'])}" for d in diagnostics]
    if profiles:
        lines.append("Profiles:")
        lines += [f"  {describe(p)}" for p in profiles]
    else:
        lines.append('No profiles are defined: add them under "profiles" in mcp.json.')
    return "\n".join(lines)
