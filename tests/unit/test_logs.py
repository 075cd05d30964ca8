"""What the sidecar's log keeps of other libraries' records: their templates, never their arguments."""

from __future__ import annotations

import logging

from mcp_sidecar.logs import ForeignRecordScrubber


def _scrubbed(name: str, msg: str, *args: object) -> str:
    record = logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args or None, None)
    assert ForeignRecordScrubber().filter(record)
    return record.getMessage()


def test_a_foreign_template_shows_each_argument_as_withheld() -> None:
    line = _scrubbed("mcp.server.runner", "handler for %r returned an invalid result", "tools/list")
    assert line == "handler for <withheld> returned an invalid result"


def test_a_template_that_does_not_take_strings_says_its_arguments_were_withheld() -> None:
    assert _scrubbed("httpx", "%d bytes from %s", 12, "secret-host") == "%d bytes from %s [arguments withheld]"


def test_a_mapping_argument_is_withheld_too() -> None:
    record = logging.LogRecord("httpx", logging.ERROR, __file__, 1, "%(body)s", ({"body": "token"},), None)
    assert ForeignRecordScrubber().filter(record)
    assert "token" not in record.getMessage()


def test_the_sidecars_own_records_keep_their_arguments() -> None:
    assert _scrubbed("mcp_sidecar.gateway", "server %s", "basic") == "server basic"
