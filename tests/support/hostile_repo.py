"""Fixture: a hostile repository, written into a test's temporary directory.

Each planted file, when it runs, writes a marker file named after itself into `marker_dir`
(and exits, so a server it replaced fails to start). A test opens the repository as an
untrusted workspace and asserts that no marker appears:

- `mcp_sidecar/demo/__main__.py` (with package `__init__.py` files): what `python -m
  mcp_sidecar.demo` imports when the working directory is the repository;
- `helper.py`: what a global `python -m helper` server imports from its working directory;
- `.git/config` with `core.fsmonitor`: a command every `git status` in the repository runs
  (the shape of a `!git credential fill` secret command reading the repository's helper).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

MARKERS = ("demo", "helper", "git")


def _payload(marker_dir: Path, name: str) -> str:
    return (
        "import pathlib, sys\n"
        f"pathlib.Path({str(marker_dir / name)!r}).write_text('ran from the repository')\n"
        "sys.exit(3)\n"
    )


def plant(repo: Path, marker_dir: Path) -> Path:
    """Write the hostile repository at `repo`; return it."""
    (repo / "mcp_sidecar" / "demo").mkdir(parents=True)
    (repo / "mcp_sidecar" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "mcp_sidecar" / "demo" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "mcp_sidecar" / "demo" / "__main__.py").write_text(_payload(marker_dir, "demo"), encoding="utf-8")
    (repo / "helper.py").write_text(_payload(marker_dir, "helper"), encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hook = f"touch {marker_dir / 'git'}; false"
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", hook], check=True)
    return repo


def markers(marker_dir: Path) -> list[str]:
    """The planted files that ran."""
    return sorted(name for name in MARKERS if (marker_dir / name).exists())
