"""A stdio MCP server with a large, deterministic, realistic-looking synthetic tool catalog.

    python _synthetic_server.py --seed S --count N [--counter-file P]
    python _synthetic_server.py --catalog PATH --server NAME [--counter-file P]

`generate_tools(seed, count)` builds the catalog from word lists: snake_case verb_noun names
(with some qualifiers), an optional title, one to three sentences of description and a small
input schema, all drawn from `random.Random(seed)`. Each seed also picks a domain (issue
tracker, chat, cloud, database, ...) that contributes its own nouns, so servers differ the way
real ones do. The benchmarks import `generate_tools` to rank the very same documents in-process;
this module imports the mcp SDK only in `main()`.

The server is the SDK's low-level `Server` (no per-tool function introspection, so it starts as
fast as the SDK import allows): `tools/list` (unpaginated), empty `resources/list`,
`resources/templates/list` and `prompts/list`, and a `tools/call` that echoes the tool's name.
`--counter-file` appends the process id to a file at start, so a benchmark can check that
no server was started. `--catalog PATH --server NAME` serves one server's real tools from a
file shaped like `data/reference_catalogs.json` (`{"servers": {NAME: {"tools": [...]}}}`)
instead of generated ones, under that server's name.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Sequence
from typing import Any

VERBS = (
    "list", "get", "create", "update", "delete", "search", "find", "fetch", "export", "import",
    "archive", "restore", "approve", "reject", "assign", "close", "open", "merge", "sync", "upload",
    "download", "publish", "schedule", "cancel", "validate", "summarize", "translate", "resize",
    "convert", "compare", "count", "rename", "move", "copy", "tag", "label", "comment", "notify",
    "invite", "remove", "enable", "disable", "start", "stop", "restart", "deploy", "rollback",
    "backup", "scan", "analyze", "generate", "render", "parse", "index", "lock", "unlock", "watch",
    "subscribe", "refund", "charge",
)  # fmt: skip

COMMON_NOUNS = (
    "file", "folder", "document", "user", "team", "project", "task", "comment", "label", "report",
    "record", "event", "message", "note", "attachment", "permission", "role", "setting", "webhook",
    "token", "session", "log", "metric", "alert", "dashboard", "template", "workflow", "job",
    "schedule", "notification", "image", "video", "link", "tag", "version", "snapshot", "export",
    "invoice", "contact", "account",
)  # fmt: skip

DOMAINS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (domain, tuple(nouns.split()))
    for domain, nouns in (
        (
            "issue tracker",
            "issue sprint epic milestone board backlog ticket "
            "assignee estimate priority component release bug story worklog",
        ),
        (
            "source control",
            "repository branch commit pull_request review diff tag "
            "fork gist check_run workflow_run artifact release_note blame patch",
        ),
        (
            "team chat",
            "channel thread reaction reminder mention direct_message emoji "
            "huddle bookmark status member workspace pin poll canvas",
        ),
        (
            "cloud infrastructure",
            "instance bucket volume cluster pod deployment service "
            "namespace secret load_balancer subnet firewall_rule container image_registry autoscaler",
        ),
        (
            "database",
            "table column index query schema row view "
            "migration transaction constraint trigger partition replica connection statistics",
        ),
        (
            "payments",
            "payment customer subscription refund charge payout dispute "
            "coupon price product checkout_session balance tax_rate receipt card",
        ),
        (
            "knowledge base",
            "page database_entry block wiki space article outline "
            "glossary citation revision draft section heading toc backlink",
        ),
        (
            "calendar and mail",
            "calendar meeting invitation email inbox draft_email thread "
            "signature availability room recurrence attendee agenda timezone filter",
        ),
        (
            "observability",
            "trace span log_line monitor incident slo error_rate "
            "latency host service_map anomaly runbook oncall_shift escalation heatmap",
        ),
        (
            "design and media",
            "canvas layer frame component asset palette font "
            "thumbnail audio_clip subtitle playlist album sketch mockup prototype",
        ),
    )
)

QUALIFIERS = (
    "by_id", "by_name", "in_bulk", "for_user", "for_team", "with_details", "as_csv", "as_pdf",
    "async", "batch", "recent", "archived", "details", "history", "stats", "summary",
)  # fmt: skip

SUBJECTS = (
    "the current workspace", "a project", "the authenticated user", "a team", "the selected account",
    "an organization", "the given folder", "a date range", "the active session", "a customer",
)  # fmt: skip

PURPOSES = (
    "Useful for dashboards and reports.", "Results are paginated; pass the cursor to continue.",
    "Requires write access.", "Returns JSON with the matching items.", "Only the owner can do this.",
    "Changes are recorded in the audit log.", "Supports filtering by status, owner and date.",
    "Large results are truncated to 100 items.", "Safe to retry; the operation is idempotent.",
    "Sends a notification to the people involved.", "Uses the server's default region unless one is given.",
    "The result includes links that can be opened in a browser.",
)  # fmt: skip

PARAMETER_NAMES = (
    "id", "name", "query", "limit", "cursor", "owner", "status", "since", "until", "path", "format",
    "message", "title", "body", "labels", "assignee", "region", "dry_run", "force", "recursive",
)  # fmt: skip

ADJECTIVES = ("new", "existing", "archived", "shared", "pending", "recent", "private", "public", "draft", "failed")


def _words(identifier: str) -> str:
    return identifier.replace("_", " ")


def _sentence(rng: random.Random, verb: str, noun: str, qualifier: str | None) -> str:
    thing = _words(noun)
    adjective = rng.choice(ADJECTIVES)
    subject = rng.choice(SUBJECTS)
    forms = (
        f"{verb.capitalize()} {adjective} {thing}s in {subject}",
        f"{verb.capitalize()} a {thing} for {subject}",
        f"{verb.capitalize()} one or more {thing}s, given their ids",
        f"{verb.capitalize()} the {thing} and return its metadata",
        f"{verb.capitalize()} {thing}s that match a query in {subject}",
    )
    text = rng.choice(forms)
    if qualifier:
        text += f" ({_words(qualifier)})"
    return text + "."


def generate_tools(seed: int, count: int) -> list[dict[str, Any]]:
    """`count` distinct tool descriptors, deterministic for a seed."""
    rng = random.Random(seed)
    domain, domain_nouns = DOMAINS[seed % len(DOMAINS)]
    nouns = list(domain_nouns) * 3 + list(COMMON_NOUNS)  # domain nouns are the more frequent
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    while len(tools) < count:
        verb = rng.choice(VERBS)
        noun = rng.choice(nouns)
        qualifier = rng.choice(QUALIFIERS) if rng.random() < 0.45 else None
        name = f"{verb}_{noun}" + (f"_{qualifier}" if qualifier else "")
        if name in seen:
            name = f"{name}_v{sum(1 for n in seen if n.startswith(name)) + 2}"
        seen.add(name)
        sentences = [_sentence(rng, verb, noun, qualifier)]
        if rng.random() < 0.6:
            sentences.append(f"Part of the {domain} integration.")
        if rng.random() < 0.7:
            sentences.append(rng.choice(PURPOSES))
        parameters = rng.sample(PARAMETER_NAMES, rng.randint(1, 4))
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {p: {"type": "string", "description": f"The {_words(p)}."} for p in parameters},
            "required": parameters[: rng.randint(0, len(parameters))],
        }
        tool: dict[str, Any] = {"name": name, "description": " ".join(sentences), "inputSchema": schema}
        if rng.random() < 0.5:
            tool["title"] = _words(name).title()
        tools.append(tool)
    return tools


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="synthetic MCP server for the discovery benchmarks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--counter-file", default=None, metavar="PATH")
    parser.add_argument("--catalog", default=None, metavar="PATH", help="serve a server's tools from this file")
    parser.add_argument("--server", default=None, metavar="NAME", help="with --catalog: which server's tools")
    args = parser.parse_args(argv)
    if (args.catalog is None) != (args.server is None):
        parser.error("--catalog and --server go together")
    return args


def catalog_tools(path: str, server: str) -> list[dict[str, Any]]:
    """The tool descriptors of `server` in a reference catalog file."""
    with open(path, encoding="utf-8") as file:
        tools: list[dict[str, Any]] = json.load(file)["servers"][server]["tools"]
    return tools


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.counter_file:
        with open(args.counter_file, "a", encoding="utf-8") as counter:
            counter.write(f"{os.getpid()}\n")

    import anyio
    import mcp_types as types
    from mcp.server.caching import CacheHint
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    if args.catalog:
        descriptors, name = catalog_tools(args.catalog, args.server), args.server
    else:
        descriptors, name = generate_tools(args.seed, args.count), f"synthetic-{args.seed}"
    tools = [types.Tool.model_validate(t) for t in descriptors]
    listed = types.ListToolsResult(tools=tools)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[])

    server: Server[Any] = Server(
        name,
        version="0.1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_list_prompts=list_prompts,
        # The same lists for everyone: public, so the sidecar may keep them on disk (the SDK's
        # default, private, keeps a modern server's lists in memory only).
        cache_hints={"tools/list": CacheHint(scope="public"), "prompts/list": CacheHint(scope="public")},
    )

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
