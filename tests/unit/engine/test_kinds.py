"""Which command lines run as fronts of the engine (the default) and which in their own process."""

from __future__ import annotations

import sys

import pytest

from mcp_sidecar.engine import kinds

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="fronts need Linux's SO_PEERCRED")


@linux_only
@pytest.mark.parametrize("value", [None, "", "on", "ON", "yes", "1"])
def test_the_engine_is_on_unless_turned_off(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(kinds.ENGINE_ENV, raising=False)
    else:
        monkeypatch.setenv(kinds.ENGINE_ENV, value)
    assert kinds.wanted([]) == "lsp"
    assert kinds.wanted(["-v", "--log-file", "x.log", "--project", "p"]) == "lsp"
    assert kinds.wanted(["mcp", "--session", "s"]) == "mcp"
    assert kinds.wanted(["status"]) == "cli"


@pytest.mark.parametrize("value", ["off", "OFF", " off ", "0", "false", "no"])
def test_off_runs_in_process(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(kinds.ENGINE_ENV, value)
    for argv in ([], ["mcp"], ["status"]):
        assert kinds.wanted(argv) is None


@linux_only
def test_what_talks_to_a_person_or_the_network_runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kinds.ENGINE_ENV, raising=False)
    for argv in (
        ["--help"],
        ["--version"],
        ["mcp", "--http", "127.0.0.1:0"],
        ["mcp", "--http=127.0.0.1:0"],
        ["login", "github"],
        ["call", "--elicit", "basic.echo"],
        ["engine"],
    ):
        assert kinds.wanted(argv) is None, argv
