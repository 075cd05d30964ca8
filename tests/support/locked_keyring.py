"""A keyring backend that is always locked: what `keyring` raises when unlocking a Secret
Service collection fails or is dismissed, which a headless test cannot bring about for real.

Selected in a CLI subprocess with `PYTHON_KEYRING_BACKEND=locked_keyring.LockedKeyring` and
this directory on its PYTHONPATH (`locked_keyring_env`).
"""

from __future__ import annotations

import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked


class LockedKeyring(KeyringBackend):
    priority = 1

    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("Failed to unlock the collection!")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringLocked("Failed to unlock the collection!")


def locked_keyring_env() -> dict[str, str]:
    """Environment entries that make a subprocess's keyring this locked one."""
    path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHON_KEYRING_BACKEND": "locked_keyring.LockedKeyring", "PYTHONPATH": path}


NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
"""Environment entries for a subprocess with no keyring backend at all."""
