"""The prompts a gateway listed last, kept on disk so the next start answers `prompts/list` at once.

Hosts ask for prompts as they start (Claude Code turns them into slash commands), and listing
them means starting every server: 1 to 2.6 s that a host's start-up waited for. The gateway now
answers from this snapshot, or with no prompts when there is none, and lists them for real in
the background once it is up; when that differs from what it answered, the hosts get
`notifications/prompts/list_changed` and list again.

`<cache>/gateway-prompts/<workspace digest>.json`, 0600: the entries exactly as the gateway
listed them (already sanitised, no credential), per protocol-era family, with the cache keys
of the servers they came from. A snapshot of other servers (a definition changed, a server
added or disabled, another offer) or older than a day is not used. Entries read back are
checked and sanitised again: the file is the user's, but a broken or planted one must not
reach a host as it is.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar import fs
from mcp_sidecar.config import paths
from mcp_sidecar.output.sanitize import one_line, strip_controls

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar

log = logging.getLogger(__name__)

Family = Literal["handshake", "modern"]
MAX_BYTES = 4 * 1024 * 1024
"""Prompt catalogs are limited to 4 MiB of descriptors each; a snapshot bigger than this is not ours."""
MAX_AGE_S = 24 * 3600
"""As long as a disk-cached tool catalog is served."""
VERSION = 1


class PromptSnapshot:
    def __init__(self, app: Sidecar, directory: Path | None = None) -> None:
        self._app = app
        self._dir = directory or paths.cache_dir() / "gateway-prompts"
        self._file = hashlib.sha256(str(app.configuration.workspace).encode()).hexdigest()[:32] + ".json"
        self._lists: dict[str, list[dict[str, Any]]] | None = None
        """Family → entries, once read (and found to be of the servers configured now)."""

    def key(self) -> str:
        """The servers the prompts come from: each enabled server's catalog cache key (the profile's only)."""
        searched = self._app.configuration.searches
        keys = sorted(
            self._app.catalogs.key(conn)
            for conn in self._app.registry
            if not conn.config.disabled and searched(conn.name)
        )
        return hashlib.sha256("\n".join(keys).encode()).hexdigest()

    def listed(self, modern: bool) -> list[dict[str, Any]]:
        """The entries to answer with: the snapshot's, or none (the real list follows in the background)."""
        if self._lists is None:
            self._lists = self._load()
        return list(self._lists.get("modern" if modern else "handshake", []))

    def save(self, family: Family, entries: list[dict[str, Any]]) -> None:
        """Keep what the gateway just listed; a failure is logged (the next start lists them again)."""
        lists = dict(self._lists or {})
        lists[family] = entries
        self._lists = lists
        data = {"v": VERSION, "key": self.key(), "savedAt": time.time(), "lists": lists}
        try:
            with fs.private_directory(self._dir, create=True) as dir_fd:
                assert dir_fd is not None  # created
                fs.atomic_write_at(dir_fd, self._file, json.dumps(data, ensure_ascii=False).encode("utf-8"))
        except (OSError, fs.UnsafeDirectory) as exc:
            log.info("gateway prompts not kept for the next start: %s", type(exc).__name__)

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        try:
            with fs.private_directory(self._dir, create=False) as dir_fd:
                if dir_fd is None:
                    return {}
                data = json.loads(fs.read_private_file(dir_fd, self._file, MAX_BYTES))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, fs.UnsafeDirectory) as exc:
            log.info("gateway prompts snapshot not usable: %s", type(exc).__name__)
            return {}
        if not isinstance(data, dict) or data.get("v") != VERSION or data.get("key") != self.key():
            return {}
        saved = data.get("savedAt")
        if not isinstance(saved, int | float) or not 0 <= time.time() - saved <= MAX_AGE_S:
            return {}
        lists = data.get("lists")
        if not isinstance(lists, dict):
            return {}
        return {family: _entries(lists.get(family)) for family in ("handshake", "modern") if family in lists}


def _entries(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        return []
    return [entry for item in value if (entry := _entry(item)) is not None]


def _entry(item: Any) -> dict[str, Any] | None:
    """A prompt entry as the gateway lists one, sanitised again; None for anything else."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    entry: dict[str, Any] = {"name": one_line(item["name"])}
    for field in ("title", "description"):
        if isinstance(item.get(field), str):
            entry[field] = strip_controls(item[field]) if field == "description" else one_line(item[field])
    arguments = item.get("arguments")
    if isinstance(arguments, list):
        kept = [_argument(a) for a in arguments]
        if any(a is None for a in kept):
            return None
        entry["arguments"] = kept
    return entry


def _argument(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    argument: dict[str, Any] = {"name": one_line(item["name"])}
    if isinstance(item.get("description"), str):
        argument["description"] = strip_controls(item["description"])
    if isinstance(item.get("title"), str):
        argument["title"] = one_line(item["title"])
    if isinstance(item.get("required"), bool):
        argument["required"] = item["required"]
    return argument
