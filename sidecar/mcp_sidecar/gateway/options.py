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
    parser.add_argument("--session", help="a durable session: its activated tools are restored after a restart")
    parser.add_argument(
        "--approved-only",
        action="store_true",
        help="with --trust-project: run only the project servers already approved (in an editor, or by an earlier "
        "--trust-project); new or changed definitions wait for approval instead of being approved by this start",
    )
    return parser
