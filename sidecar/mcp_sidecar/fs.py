"""File writes that never leave half a file behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Any


def atomic_write(path: Path, text: str | bytes, mode: int = 0o600) -> None:
    """Replace `path` with `text` (UTF-8) or bytes: a temporary file in the same directory, fsync, rename.

    A crash at any point leaves either the old file or the new one. `mode` applies to the
    new file (callers that keep an existing file's permissions pass them in).
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        handle: IO[Any] = os.fdopen(fd, "w", encoding="utf-8") if isinstance(text, str) else os.fdopen(fd, "wb")
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
