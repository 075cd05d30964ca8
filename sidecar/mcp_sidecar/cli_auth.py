"""Headless OAuth: `login` and `logout` (the conformance suite's client is `cli_conformance.py`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_sidecar.output.sanitize import json_text, one_line, strip_controls
from mcp_sidecar.protocol.errors import SidecarError

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import LoginResult, LogoutResult


def add_parsers(sub: Any) -> None:
    login = sub.add_parser(
        "login", help="OAuth login for an HTTP server: login SERVER [--no-browser] [--approve-scopes]"
    )
    login.add_argument("server")
    login.add_argument("--no-browser", action="store_true", help="print the URL and read the pasted callback address")
    login.add_argument(
        "--approve-scopes",
        action="store_true",
        help="approve the extra scopes a refused tool call asked for without a prompt (they are printed)",
    )
    logout = sub.add_parser("logout", help="remove a server's stored OAuth credentials and revoke them")
    logout.add_argument("server")


async def _approval(asked: LoginResult, approve: bool) -> tuple[str, ...] | None:
    """The person's answer to the extra scopes: all of them, none (`()`), or None to cancel.

    `--approve-scopes` answers "all" without a prompt; otherwise a terminal is asked, and a run
    without one (a script) cancels rather than grant more access silently.
    """
    extra = tuple(asked.get("extraScopes", []))
    shown = " ".join(one_line(s) for s in extra)
    if approve:
        print(f"Approving the extra scopes {shown} (--approve-scopes).", file=sys.stderr)
        return extra
    print(strip_controls(asked["text"]), file=sys.stderr)
    if not sys.stdin.isatty():
        print("No terminal to ask: run again with --approve-scopes to approve them.", file=sys.stderr)
        return None
    print(f"Log in with {shown}? [y]es, [n]o (log in without them), [c]ancel: ", end="", file=sys.stderr, flush=True)
    answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
    if answer in ("y", "yes"):
        return extra
    if answer in ("n", "no"):
        return ()
    return None


def _print_error(error: SidecarError, as_json: bool) -> None:
    if as_json:
        print(json_text({"error": error.diagnostic.to_json()}))
    else:
        print(one_line(error.diagnostic.render()), file=sys.stderr)


async def login_or_logout(args: argparse.Namespace, project: Path) -> int:
    from mcp_sidecar.services.app import Sidecar

    app = Sidecar.headless(project, args.trust_project)

    async def announce(url: str) -> bool:
        print(f"Opening the authorization page: {one_line(url)}", file=sys.stderr)
        return False  # then the system browser is tried

    app.auth.open_external = announce
    result: LoginResult | LogoutResult
    try:
        if args.command == "logout":
            result = await app.auth.logout(args.server)
        else:
            first = await app.auth.login(args.server, args.no_browser)
            if first["status"] == "needs_approval":
                approved = await _approval(first, args.approve_scopes)
                if approved is None:
                    print(f"{args.server}: login cancelled; nothing was opened or sent.", file=sys.stderr)
                    return 1
                first = await app.auth.login(args.server, args.no_browser, approved)
            pending = first
            if pending["status"] != "pending":
                result = pending
            else:
                print(strip_controls(pending["text"]), file=sys.stderr)
                print("Callback address: ", end="", file=sys.stderr, flush=True)
                pasted = await asyncio.to_thread(sys.stdin.readline)
                result = await app.auth.complete_login(pending["loginId"], pasted.strip())
    except SidecarError as exc:
        _print_error(exc, args.json)
        return 1
    finally:
        await app.shutdown()
    print(json_text(result) if args.json else strip_controls(result["text"]))
    return 0


__all__ = ["add_parsers", "login_or_logout"]
