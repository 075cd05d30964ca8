"""The `mcp` command's options, without importing the SDK (every CLI run builds the parser)."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(
        "mcp", help="serve MCP on stdio: one mcp_tools tool, then the activated tools as native tools (any MCP host)"
    )
    parser.add_argument(
        "--tools",
        choices=("native", "proxy"),
        default="native",
        help="native: activated tools join tools/list (default); proxy: mcp_tools and mcp_call only, "
        "for hosts that ignore list_changed",
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
    return parser


def _session_name(value: str) -> str:
    from mcp_sidecar.gateway.durable import valid_name

    if not valid_name(value):
        raise argparse.ArgumentTypeError("1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value
