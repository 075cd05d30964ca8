"""The `mcp` command's options, without importing the SDK (every CLI run builds the parser)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar.catalog.context_budget import CONTEXT_WINDOW, DEFAULT_BUDGET, MAX_BUDGET
from mcp_sidecar.config import budget
from mcp_sidecar.config.budget import Budget

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "mcp",
        help="serve MCP on stdio (or --http on loopback): one mcp_tools tool, then the activated tools as native "
        "tools (any MCP host)",
    )
    parser.add_argument(
        "--tools",
        choices=("native", "proxy"),
        default="native",
        help="native: activated tools join tools/list (default); proxy: mcp_tools and mcp_call only, "
        "for hosts that ignore list_changed",
    )
    parser.add_argument(
        "--expose",
        choices=("auto", "search", "all"),
        default="auto",
        help="auto: every tool of the enabled servers (the profile's) is listed from the start, beside mcp_tools, "
        "while together they cost at most --expose-budget tokens, else they are found with mcp_tools query "
        "(default); all: always listed; search: never (with --tools proxy: never)",
    )
    parser.add_argument(
        "--expose-budget",
        type=_budget,
        default=DEFAULT_BUDGET,
        metavar="TOKENS",
        help=f"with --expose auto: the most every tool may cost, in estimated tokens (default {DEFAULT_BUDGET}: "
        f"2%% of a {CONTEXT_WINDOW // 1000}k-token context window)",
    )
    parser.add_argument(
        "--resources",
        action="store_true",
        help="list every enabled server's resources in resources/list, as mcp-sidecar://SERVER/URI "
        "(default: none listed; models read them with mcp_tools read)",
    )
    parser.add_argument(
        "--session",
        type=_session_name,
        help="a durable session NAME: its activated tools are restored after a restart",
    )
    parser.add_argument(
        "--http",
        type=_loopback,
        metavar="HOST:PORT",
        help="serve Streamable HTTP instead of stdio, on 127.0.0.1, ::1 or localhost only (PORT 0: any free port); "
        "every request needs the bearer token printed at start",
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="PATH",
        help="with --http: write the bearer token to PATH (created 0600) instead of printing it",
    )
    parser.add_argument(
        "--list-wait",
        type=_seconds,
        default=2.0,
        metavar="SECONDS",
        help="after an activation, how long its answer waits for the host to list its tools again, so that "
        "its next model request carries them (default 2; 0: answer at once). A host that has not listed "
        "them by then is told to call them with mcp_call",
    )
    parser.add_argument(
        "--background-after",
        type=_background_seconds,
        default=120.0,
        metavar="SECONDS",
        help="a tool call still running after SECONDS goes on in the background: the host is answered at once "
        'with the call id, and its model fetches the result with mcp_tools {"result": ID} (default 120; '
        "0: never). Hosts that follow 2026-07-28 tasks get a task instead",
    )
    parser.add_argument(
        "--max-active-tools",
        type=_limit("maxTools"),
        metavar="N",
        help="the session budget: at most N tools active at once; activating more deactivates the least recently "
        "used ones, and the model is told which (default: the config file's sessionBudget, else no limit; 0: none)",
    )
    parser.add_argument(
        "--max-active-tokens",
        type=_limit("maxTokens"),
        metavar="N",
        help="the session budget: at most N tokens of active tool definitions (estimated), as --max-active-tools "
        "(default: the config file's sessionBudget, else no limit; 0: none)",
    )
    parser.add_argument(
        "--approved-only",
        action="store_true",
        help="with --trust-project: run only the project servers already approved (in an editor, or by an earlier "
        "--trust-project); new or changed definitions wait for approval instead of being approved by this start",
    )
    return parser


def _limit(field: str) -> Any:
    def parse(value: str) -> int:
        number = int(value) if value.isdigit() else -1
        wrong = budget.limit_problem(field, number, allow_zero=True)
        if wrong is not None:
            raise argparse.ArgumentTypeError(f"{wrong} (0: no limit), got {value!r}")
        return number

    return parse


def budget_of(args: argparse.Namespace) -> Budget:
    """The host's own session budget from `--max-active-tools` / `--max-active-tokens` (None: the files')."""
    return Budget(getattr(args, "max_active_tools", None), getattr(args, "max_active_tokens", None))


def _budget(value: str) -> int:
    try:
        tokens = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        tokens = -1
    if not 0 <= tokens <= MAX_BUDGET:
        raise argparse.ArgumentTypeError(f"expected a whole number of tokens from 0 to {MAX_BUDGET} (got {value!r})")
    return tokens


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 60:
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 60 (got {value!r})")
    return seconds


def _background_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 3600:
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 3600 (got {value!r})")
    return seconds


def _loopback(value: str) -> Address:
    try:
        return parse_address(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass(frozen=True)
class Address:
    host: str
    """As given: one of `LOOPBACK`."""
    port: int
    """0: any free port."""

    @property
    def bind_host(self) -> str:
        return "::1" if self.host == "::1" else "127.0.0.1"


def parse_address(value: str) -> Address:
    """`HOST:PORT` with a loopback HOST (`127.0.0.1`, `localhost`, `::1` or `[::1]`); else ValueError."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not host:
        raise ValueError(f"expected HOST:PORT, e.g. 127.0.0.1:8765 (got {value!r})")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if host.lower() not in LOOPBACK:
        raise ValueError(
            f"{host!r} is not a loopback address: the gateway serves HTTP only on 127.0.0.1, ::1 or localhost"
        )
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"the port must be 0 to 65535 (0: any free port), got {port_text!r}")
    return Address(host.lower(), int(port_text))


def _session_name(value: str) -> str:
    from mcp_sidecar.gateway.durable import valid_name

    if not valid_name(value):
        raise argparse.ArgumentTypeError("1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value
