"""`mcp/profile`: the client's profile, chosen, cleared or shown (`config/profiles.py` has the format).

A profile narrows what this client searches: discovery, `mcp_tools`' server directory and
activation cover only its servers (status and the person's own commands still show every
server). Choosing one drops this client's active tools of servers it leaves out (reason
`profile changed`) and activates its `activate` tools in the request's session; a tool that
does not activate is a diagnostic naming it. Other clients of the same engine keep their own
profile: all of this is the client's state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_sidecar.events import EventHub, ProfileChanged, ToolsDeactivated
from mcp_sidecar.output import profile_text
from mcp_sidecar.protocol.errors import diagnostic, fail

if TYPE_CHECKING:
    from mcp_sidecar.protocol.params import ProfileParams
    from mcp_sidecar.protocol.results import ActivateResult, ProfileResult
    from mcp_sidecar.services.activation import Activation
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.notifier import Notifier
    from mcp_sidecar.services.sessions import Sessions

PROFILE_CHANGED = "profile changed"


class Profiles:
    def __init__(
        self,
        configuration: Configuration,
        sessions: Sessions,
        activation: Activation,
        notifier: Notifier,
        hub: EventHub,
    ) -> None:
        self._configuration = configuration
        self._sessions = sessions
        self._activation = activation
        self._notifier = notifier
        self._hub = hub
        hub.subscribe(ProfileChanged, self._changed)

    async def profile(self, p: ProfileParams) -> ProfileResult:
        """Show (`p.change` False), choose or clear (`p.profile` None) this client's profile."""
        cfg = self._configuration
        cfg.ensure_loaded()
        if not p.change:
            return self._result(False, None, [])
        if p.profile is not None:
            self._check_choosable(p.profile)
        changed = p.profile != cfg.profile_name
        cfg.profile_name = p.profile
        cfg.profile_left_out = []
        with self._hub.collect(ToolsDeactivated) as gone:
            self._hub.publish(ProfileChanged(p.profile))
        activation = await self.start(p.session)
        deactivated = sorted({tool_id for event in gone for tool_id in event.removed})
        return self._result(changed, activation, deactivated)

    def _changed(self, event: ProfileChanged) -> None:
        """What the client searches changed: its tools of servers left out go, and the `mcp_tools`
        definition (its server directory) is sent again when it differs."""
        self._leave_unsearched()
        self._notifier.model_tool_changed()

    def _check_choosable(self, name: str) -> None:
        cfg = self._configuration
        found = cfg.profiles.get(name)
        if found is None:
            defined = ", ".join(sorted(cfg.profiles)) or "none"
            raise fail("profile_not_found", "profile", f"No profile named {name!r} (defined: {defined}).")
        if found.approval_required:
            raise fail(
                "trust_required",
                "profile",
                f"Project profile {name!r} is new or changed since it was approved: approve it first.",
            )

    def choose_at_start(self, name: str | None) -> None:
        """The client's own choice at its start (`initializationOptions.profile`, `--profile`): kept even
        when it names no usable profile, which its diagnostic says (every server is searched meanwhile)."""
        self._configuration.profile_name = name

    async def start(self, session: str) -> ActivateResult | None:
        """Activate the chosen profile's `activate` tools in `session`; each that does not activate becomes
        a diagnostic naming it (`mcp/status`, `mcp/profile`)."""
        cfg = self._configuration
        chosen = cfg.profile()
        if chosen is None or not chosen.activate:
            return None
        done = await self._activation.activate(chosen.activate, session)
        cfg.profile_left_out = [
            diagnostic(
                "tool_not_found",
                "profile",
                f"Profile {chosen.name!r} names tool {row['id']!r}, which was not activated: {row['reason']}",
                row["id"].split(".", 1)[0] if "." in row["id"] else None,
            )
            for row in done["results"]
            if row["status"] == "not loaded"
        ]
        return done

    def _leave_unsearched(self) -> list[str]:
        """Drop the active tools of servers the profile does not search, from each of this client's sessions."""
        dropped: list[str] = []
        for session in list(self._sessions):
            outside = [
                i for i, t in self._sessions.active(session).items() if not self._configuration.searches(t.server)
            ]
            dropped += self._sessions.deactivate(session, outside, PROFILE_CHANGED)
        return sorted(set(dropped))

    def _result(self, changed: bool, activation: ActivateResult | None, deactivated: list[str]) -> ProfileResult:
        cfg = self._configuration
        chosen = cfg.profiles.get(cfg.profile_name) if cfg.profile_name is not None else None
        profiles = [p.to_json() for _, p in sorted(cfg.profiles.items())]
        diagnostics = [d.to_json() for d in cfg.profile_diagnostics()]
        return {
            "profile": chosen.to_json() if chosen is not None else None,
            "changed": changed,
            "profiles": profiles,
            "activation": activation,
            "deactivated": deactivated,
            "diagnostics": diagnostics,
            "text": profile_text.render(cfg.profile_name, profiles, activation, deactivated, diagnostics),
        }

    def choosable(self) -> list[str]:
        """The profiles this client can choose (defined, valid, approved), for status and completion."""
        return sorted(name for name, p in self._configuration.profiles.items() if not p.approval_required)
