"""A real Secret Service for tests: a private D-Bus session bus with gnome-keyring, unlocked.

The sidecar processes under test get `DBUS_SESSION_BUS_ADDRESS` (and a private HOME) from
`secret_service_env`, so `keyring` talks to a real Secret Service and nothing touches the
user's own keyring. `scripts/setup --test` installs gnome-keyring and dbus-daemon.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def secret_service_env(root: Path) -> Iterator[dict[str, str]]:
    daemon, keyring_daemon = shutil.which("dbus-daemon"), shutil.which("gnome-keyring-daemon")
    assert daemon, "dbus-daemon is needed (scripts/setup --test installs it)"
    assert keyring_daemon, "gnome-keyring-daemon is needed (scripts/setup --test installs it)"
    root.mkdir(parents=True, exist_ok=True)
    bus = subprocess.Popen(
        [daemon, "--session", "--nofork", f"--address=unix:path={root / 'bus'}", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert bus.stdout is not None
    address = bus.stdout.readline().decode().strip()
    assert address.startswith("unix:"), "dbus-daemon did not start"
    env = {
        "DBUS_SESSION_BUS_ADDRESS": address,
        "HOME": str(root),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_RUNTIME_DIR": str(root / "run"),
    }
    (root / "run").mkdir(mode=0o700, exist_ok=True)
    keyring = subprocess.Popen(
        [keyring_daemon, "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    assert keyring.stdin is not None
    keyring.stdin.write(b"test-keyring-password")
    keyring.stdin.close()
    try:
        _wait_for_secret_service(env)
        yield env
    finally:
        for proc in (keyring, bus):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)


def _wait_for_secret_service(env: dict[str, str], within: float = 20) -> None:
    probe = (
        "import keyring; keyring.set_password('mcp-sidecar-probe', 'p', 'v');"
        "assert keyring.get_password('mcp-sidecar-probe', 'p') == 'v';"
        "keyring.delete_password('mcp-sidecar-probe', 'p')"
    )
    import sys

    deadline = time.monotonic() + within
    while True:
        done = subprocess.run(
            [sys.executable, "-c", probe], env={**os.environ, **env}, capture_output=True, timeout=within
        )
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError("the Secret Service did not come up: " + done.stderr.decode()[-500:])
        time.sleep(0.2)
