"""How the model's texts name what it can call and what a person can run, by where they are read.

The editors' chats (the default) call an activated tool by its exact id (`mcp_call`, or the
editor's own registration) and a person runs `/mcp ...` in the editor. Through the gateway a
host's model calls each activated tool by its native name, a person runs `mcp-sidecar run ...`
in a terminal, and a prompt is one of the host's own prompt commands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Wording:
    call_name: Callable[[str], str] | None = None
    """The name the model calls an activated tool id by, when it is not the id itself."""
    command: str = "/mcp"
    """What a person types before a `/mcp` command's words."""
    prompt_command: Callable[[str, str], str] | None = None
    """How a person runs a server's prompt (server, name), when it is not `/mcp prompt SERVER NAME`."""
    call_hint: str | None = None
    """The line after an activation's signatures, when it is not the editors' one."""
    loaded_note: str | None = None
    """The line after a query's `[loaded]` rows, when it is not the editors' one."""

    def person_command(self, text: str) -> str:
        """`text` (a hint) with its `/mcp ` commands spelled as this reader's person runs them."""
        return text if self.command == "/mcp" else text.replace("/mcp ", f"{self.command} ")


EDITOR = Wording()
