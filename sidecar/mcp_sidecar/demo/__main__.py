"""The bundled demo: a small stdio MCP server for first runs and examples.

The sidecar starts it as `python -I /absolute/path/to/this/file` (see `config/loader.py`),
so nothing from the working directory or `PYTHONPATH` is importable; the only entry added
to `sys.path` is the directory this copy of `mcp_sidecar` was installed in. `python -m
mcp_sidecar.demo` works too.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcp_sidecar.demo.server import build

build().run("stdio")
