"""Regenerate `benchmarks/data/task_catalogs.json`: tool lists of many real, published MCP servers.

A larger catalog than `reference_catalogs.json`, for the task-style queries of
`data/queries_tasks.json`. Installs each server of `NPM_SERVERS` (one `npm install` each, install
scripts not run, pinned versions where a newer release only proxies to a hosted server) and of
`PYPI_SERVERS` (one venv each) into a work directory (a temp dir unless `--workdir` is given),
starts it over stdio with the SDK client of `make_reference_catalogs.py`, follows `tools/list`
pagination and keeps the tool metadata only: name, title, description, inputSchema.

Listing tools needs no account: credentials are dummies (most servers check them only when a
tool is called), databases point at a closed loopback port, and telemetry is switched off. A
server that cannot be installed, needs the network to start, or does not answer within
`LIST_TIMEOUT_S` is reported and left out. The seven servers of `reference_catalogs.json` are
copied from that file, not reinstalled, so that this catalog is a superset of it.

Not a benchmark: run it when the dataset should follow newer server releases, then re-check the
labels in `data/queries_tasks.json`, `data/queries_tasks_more.json` and
`data/queries_paraphrase_tasks.json` (every label must still name a listed tool).

    .venv/bin/python benchmarks/make_task_catalogs.py [--workdir DIR] [--output PATH] [--only NAME ...]
    .venv/bin/python benchmarks/make_task_catalogs.py --check   # only check the query labels

`--check` (also run after every full regeneration) checks that each `relevant` id of those files
names a tool of the catalog; it ranks nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from _common import BENCHMARKS, PYTHON, ROOT
from make_reference_catalogs import OUTPUT as REFERENCE_OUTPUT
from make_reference_catalogs import ServerSpec, _node_entry, _npm_version, dump_tools

OUTPUT = BENCHMARKS / "data" / "task_catalogs.json"
QUERIES = BENCHMARKS / "data" / "queries_tasks.json"
MORE_QUERIES = (BENCHMARKS / "data" / "queries_tasks_more.json", BENCHMARKS / "data" / "queries_paraphrase_tasks.json")
"""Written for issue 34 over the same catalog; checked with `queries_tasks.json` unless --queries is given."""
SUBSTITUTES = (
    "@zereight/mcp-gitlab (cut to its issues, repositories and projects toolsets plus ten merge-request, "
    "branch and pipeline tools) stands in for @modelcontextprotocol/server-gitlab, whose tools have empty "
    "input schemas that the SDK rejects; redis-mcp-server for @modelcontextprotocol/server-redis, which exits "
    "without a Redis server; mcp-atlassian lists its default toolsets only"
)
INSTALL_TIMEOUT_S = 600
"""Bound on one `npm install` or `pip install`."""
LIST_TIMEOUT_S = 60
"""Bound on starting one server and listing all its tools."""
CLOSED_PORT = 9
"""A loopback port nothing listens on: database clients get 'connection refused' at once."""
DUMMY = "dummy-token-for-listing-tools"

# Placeholders in args and env: {sandbox} (a scratch dir), {docker} (the address of `fake_docker_daemon`).
QUIET_ENV: dict[str, str] = {
    "DO_NOT_TRACK": "1",
    "NO_UPDATE_NOTIFIER": "1",
    "PUPPETEER_SKIP_DOWNLOAD": "true",
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
}


@dataclass(frozen=True)
class Server:
    name: str
    package: str
    """npm: a package spec (`name` or `name@version`); PyPI: a requirement."""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    command: str | None = None
    """PyPI: the console script, when it is not named like the distribution."""
    pins: tuple[str, ...] = ()
    """PyPI: extra requirements installed alongside (for servers that break on newer dependencies)."""
    python: str | None = None
    """PyPI: the `major.minor` the server requires, when the running interpreter is older."""


GITLAB_EXTRA_TOOLS = (
    "create_branch",
    "create_merge_request",
    "get_merge_request",
    "list_merge_requests",
    "get_merge_request_diffs",
    "create_merge_request_note",
    "merge_merge_request",
    "list_pipelines",
    "get_pipeline",
    "get_pipeline_job_output",
)

NPM_SERVERS: tuple[Server, ...] = (
    Server("github", "@modelcontextprotocol/server-github", env={"GITHUB_PERSONAL_ACCESS_TOKEN": DUMMY}),
    # @modelcontextprotocol/server-gitlab (2025.4.25) publishes empty input schemas, which the SDK
    # rejects; this one, by default 118 tools, is cut to a usual working set by its own settings.
    Server(
        "gitlab",
        "@zereight/mcp-gitlab",
        env={
            "GITLAB_PERSONAL_ACCESS_TOKEN": DUMMY,
            "GITLAB_API_URL": f"http://127.0.0.1:{CLOSED_PORT}/api/v4",
            "GITLAB_TOOLSETS": "issues,repositories,projects",
            "GITLAB_TOOLS": ",".join(GITLAB_EXTRA_TOOLS),
        },
    ),
    Server("slack", "@modelcontextprotocol/server-slack", env={"SLACK_BOT_TOKEN": DUMMY, "SLACK_TEAM_ID": "T0DUMMY"}),
    Server("postgres", "@modelcontextprotocol/server-postgres", args=[f"postgresql://127.0.0.1:{CLOSED_PORT}/dummy"]),
    Server("puppeteer", "@modelcontextprotocol/server-puppeteer"),
    Server("brave-search", "@modelcontextprotocol/server-brave-search", env={"BRAVE_API_KEY": DUMMY}),
    Server("google-maps", "@modelcontextprotocol/server-google-maps", env={"GOOGLE_MAPS_API_KEY": DUMMY}),
    Server("notion", "@notionhq/notion-mcp-server", env={"NOTION_TOKEN": DUMMY}),
    Server("playwright", "@playwright/mcp", args=["--headless", "--output-dir", "{sandbox}/playwright"]),
    Server("sentry", "@sentry/mcp-server", args=[f"--access-token={DUMMY}"]),
    # 0.3 and later only relay to a hosted server; 0.2.x lists its tools locally.
    Server("stripe", "@stripe/mcp@0.2.5", args=["--tools=all", "--api-key=sk_test_dummy"]),
    Server("kubernetes", "mcp-server-kubernetes", env={"KUBECONFIG": "{sandbox}/kubeconfig"}),
    Server("linear", "linear-mcp-server", env={"LINEAR_API_KEY": DUMMY}),
    Server(
        "mongodb",
        "mongodb-mcp-server",
        env={"MDB_MCP_TELEMETRY": "disabled", "MDB_MCP_LOG_PATH": "{sandbox}/mongodb-logs"},
    ),
    Server("context7", "@upstash/context7-mcp"),
    Server("firecrawl", "firecrawl-mcp", env={"FIRECRAWL_API_KEY": "fc-dummy"}),
    Server("circleci", "@circleci/mcp-server-circleci", env={"CIRCLECI_TOKEN": DUMMY}),
    Server("hubspot", "@hubspot/mcp-server", env={"PRIVATE_APP_ACCESS_TOKEN": DUMMY}),
)

PYPI_SERVERS: tuple[Server, ...] = (
    # Its last release (2025.4.25) uses SDK decorators that mcp 2 removed.
    Server("sqlite", "mcp-server-sqlite", args=["--db-path", "{sandbox}/sqlite.db"], pins=("mcp<2",)),
    Server(
        "atlassian",
        "mcp-atlassian",
        env={
            "JIRA_URL": f"http://127.0.0.1:{CLOSED_PORT}/jira",
            "JIRA_USERNAME": "dummy@example.invalid",
            "JIRA_API_TOKEN": DUMMY,
            "CONFLUENCE_URL": f"http://127.0.0.1:{CLOSED_PORT}/wiki",
            "CONFLUENCE_USERNAME": "dummy@example.invalid",
            "CONFLUENCE_API_TOKEN": DUMMY,
            "TOOLSETS": "default",  # its six core toolsets (all 24 unless set; 'default' from v0.22 on)
        },
    ),
    # @modelcontextprotocol/server-redis connects at start-up and exits without a Redis server.
    Server("redis", "redis-mcp-server", env={"REDIS_HOST": "127.0.0.1", "REDIS_PORT": str(CLOSED_PORT)}),
    # It asks the daemon for its API version at start-up: `fake_docker_daemon` answers that alone.
    Server("docker", "mcp-server-docker", env={"DOCKER_HOST": "tcp://{docker}"}, python="3.12"),
    Server(
        "aws-docs",
        "awslabs-aws-documentation-mcp-server",
        command="awslabs.aws-documentation-mcp-server",
        env={"FASTMCP_LOG_LEVEL": "ERROR"},
    ),
)

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: dummy
  cluster: {server: "https://127.0.0.1:9"}
users:
- name: dummy
  user: {token: dummy}
contexts:
- name: dummy
  context: {cluster: dummy, user: dummy}
current-context: dummy
"""


class _VersionOnly(http.server.BaseHTTPRequestHandler):
    """Answers every GET as a Docker daemon answers `/version`; nothing else is needed to list tools."""

    def do_GET(self) -> None:
        body = json.dumps({"ApiVersion": "1.43", "Version": "24.0.0", "MinAPIVersion": "1.12"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


@contextlib.contextmanager
def fake_docker_daemon() -> Iterator[str]:
    """A loopback HTTP server posing as a Docker daemon's API version endpoint; yields `host:port`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _VersionOnly)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> bool:
    print("$", " ".join(argv), flush=True)
    try:
        result = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        print(f"  timed out after {INSTALL_TIMEOUT_S}s", file=sys.stderr)
        return False
    if result.returncode != 0:
        print(f"  failed ({result.returncode}): {result.stderr.strip()[-400:]}", file=sys.stderr)
    return result.returncode == 0


def _expand(value: str, places: dict[str, str]) -> str:
    for key, replacement in places.items():
        value = value.replace("{" + key + "}", replacement)
    return value


def _npm_name(spec: str) -> str:
    """`@scope/name@1.2` -> `@scope/name`."""
    at = spec.rfind("@")
    return spec[:at] if at > 0 else spec


def install_npm(server: Server, workdir: Path, places: dict[str, str], failures: dict[str, str]) -> ServerSpec | None:
    npm, node = shutil.which("npm"), shutil.which("node")
    if not (npm and node):
        failures[server.name] = "npm or node not found"
        return None
    directory = workdir / "npm" / server.name  # one tree per server: no shared dependency conflicts
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "package.json").write_text('{"name": "task-server", "private": true}\n', encoding="utf-8")
    argv = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", server.package]
    if not _run(argv, directory, {**os.environ, **QUIET_ENV}):
        failures[server.name] = "npm install failed"
        return None
    package_dir = directory / "node_modules" / _npm_name(server.package)
    args = [str(_node_entry(package_dir)), *(_expand(a, places) for a in server.args)]
    env = {**QUIET_ENV, **{k: _expand(v, places) for k, v in server.env.items()}}
    return ServerSpec(server.name, _npm_name(server.package), _npm_version(package_dir), node, args, env)


def _python(version: str | None) -> str | None:
    """An interpreter of `version` (`3.12`): on PATH, or under pyenv's root; the running one if None."""
    if version is None:
        return PYTHON
    candidates = [shutil.which(f"python{version}") or ""]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(str(p) for p in pyenv_root.glob(f"versions/{version}*/bin/python{version}"))
    for candidate in filter(None, candidates):
        try:
            if subprocess.run([candidate, "--version"], capture_output=True, timeout=30).returncode == 0:
                return candidate
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def install_pypi(server: Server, workdir: Path, places: dict[str, str], failures: dict[str, str]) -> ServerSpec | None:
    python = _python(server.python)
    if python is None:
        failures[server.name] = f"needs Python {server.python}, none found"
        return None
    venv = workdir / "venv" / server.name  # one venv per server: their pins often disagree
    pip = venv / "bin" / "pip"
    requirements = [server.package, *server.pins]
    if not (_run([python, "-m", "venv", str(venv)]) and _run([str(pip), "install", "-q", *requirements])):
        failures[server.name] = "pip install failed"
        return None
    try:
        shown = subprocess.run(
            [str(pip), "show", server.package], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
        ).stdout
    except subprocess.TimeoutExpired:
        shown = ""
    version = next((line.split(":", 1)[1].strip() for line in shown.splitlines() if line.startswith("Version:")), "?")
    command = venv / "bin" / (server.command or server.package)
    args = [_expand(a, places) for a in server.args]
    env = {**QUIET_ENV, **{k: _expand(v, places) for k, v in server.env.items()}}
    return ServerSpec(server.name, server.package, version, str(command), args, env)


def install(workdir: Path, docker: str, only: set[str] | None, failures: dict[str, str]) -> list[ServerSpec]:
    sandbox = workdir / "sandbox"
    sandbox.mkdir(parents=True, exist_ok=True)
    (sandbox / "kubeconfig").write_text(KUBECONFIG, encoding="utf-8")
    places = {"sandbox": str(sandbox), "docker": docker}
    specs: list[ServerSpec] = []
    for server in NPM_SERVERS:
        if only is None or server.name in only:
            spec = install_npm(server, workdir, places, failures)
            specs += [spec] if spec else []
    for server in PYPI_SERVERS:
        if only is None or server.name in only:
            spec = install_pypi(server, workdir, places, failures)
            specs += [spec] if spec else []
    return specs


def _open_log(logs: Path, name: str) -> TextIO:
    """Where a server's stderr goes, for the reason it failed (a local file: fine to open blocking)."""
    logs.mkdir(parents=True, exist_ok=True)
    return open(logs / f"{name}.stderr", "w", encoding="utf-8")


async def collect(specs: list[ServerSpec], logs: Path, failures: dict[str, str]) -> dict[str, Any]:
    servers: dict[str, Any] = {}
    for spec in specs:
        with _open_log(logs, spec.name) as errlog:
            try:
                tools = await asyncio.wait_for(dump_tools(spec, errlog), LIST_TIMEOUT_S)
            except Exception as exc:  # a server that fails in any way is left out
                reason = _reason(exc)
                failures[spec.name] = f"could not list tools: {reason[:300]}"
                print(f"  {spec.name}: {failures[spec.name]}", file=sys.stderr)
                continue
        if not tools:
            failures[spec.name] = "listed no tools"
            print(f"  {spec.name}: listed no tools", file=sys.stderr)
            continue
        print(f"  {spec.name} ({spec.package} {spec.version}): {len(tools)} tools", flush=True)
        servers[spec.name] = {"package": spec.package, "version": spec.version, "tools": tools}
    return servers


def _reason(exc: BaseException) -> str:
    """The innermost error of a (nested) exception group, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _reference_servers() -> dict[str, Any]:
    data = json.loads(REFERENCE_OUTPUT.read_text(encoding="utf-8"))
    return dict(data["servers"])


def check_labels(catalog: Path, queries: Path) -> list[str]:
    """The problems of the query file against the catalog: unknown ids, empty or duplicate labels."""
    servers = json.loads(catalog.read_text(encoding="utf-8"))["servers"]
    known = {f"{server}.{tool['name']}" for server, entry in servers.items() for tool in entry["tools"]}
    problems: list[str] = []
    seen: set[str] = set()
    for query in json.loads(queries.read_text(encoding="utf-8"))["queries"]:
        qid, relevant = query["id"], query["relevant"]
        if qid in seen:
            problems.append(f"{qid}: duplicate id")
        seen.add(qid)
        if not relevant or len(set(relevant)) != len(relevant):
            problems.append(f"{qid}: empty or repeated labels")
        problems += [f"{qid}: {tool} is not in {catalog.name}" for tool in relevant if tool not in known]
    return problems


def _report_labels(catalog: Path, queries: Path) -> int:
    if not queries.exists():
        print(f"{queries} not found; labels not checked", file=sys.stderr)
        return 0
    problems = check_labels(catalog, queries)
    for problem in problems:
        print(problem, file=sys.stderr)
    count = len(json.loads(queries.read_text(encoding="utf-8"))["queries"])
    print(f"{queries.name}: {count} queries, {len(problems)} label problems against {catalog.name}")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workdir", type=Path, default=None, help="install here and keep it (default: a temp dir)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"default {OUTPUT.relative_to(ROOT)}")
    parser.add_argument("--only", nargs="+", default=None, help="install and list only these servers (a trial run)")
    parser.add_argument("--check", action="store_true", help=f"only check the labels of {QUERIES.name}")
    parser.add_argument(
        "--queries", type=Path, default=None, help=f"default {QUERIES.relative_to(ROOT)} and the others"
    )
    args = parser.parse_args(argv)
    query_files = [args.queries] if args.queries else [QUERIES, *MORE_QUERIES]
    if args.check:
        return max(_report_labels(args.output, q) for q in query_files)
    failures: dict[str, str] = {}
    only = set(args.only) if args.only else None
    with tempfile.TemporaryDirectory(prefix="mcp-task-servers-") as tmp, fake_docker_daemon() as docker:
        workdir = args.workdir.resolve() if args.workdir else Path(tmp)
        specs = install(workdir, docker, only, failures)
        listed = asyncio.run(collect(specs, workdir / "logs", failures))
    reference = _reference_servers()
    clash = sorted(set(reference) & set(listed))
    if clash:
        print(f"names also in the reference catalog, kept from there: {clash}", file=sys.stderr)
    servers = {**listed, **reference}
    data = {
        "description": (
            "Tool metadata (name, title, description, inputSchema) of real, published MCP servers, as "
            "listed over stdio with dummy credentials. Generated by benchmarks/make_task_catalogs.py; the "
            f"servers {', '.join(sorted(reference))} are copied from reference_catalogs.json (not reinstalled), "
            f"so this catalog is a superset of it. Substitutes: {SUBSTITUTES}. "
            "Left out because they could not be listed here: "
            + ("; ".join(f"{name} ({why})" for name, why in sorted(failures.items())) or "none")
            + "."
        ),
        "servers": dict(sorted(servers.items())),
    }
    for name, why in sorted(failures.items()):
        print(f"left out {name}: {why}", file=sys.stderr)
    if not listed:
        print("no server could be listed; nothing written", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    total = sum(len(s["tools"]) for s in servers.values())
    print(f"wrote {args.output}: {len(servers)} servers, {total} tools")
    return 0 if args.only else max(_report_labels(args.output, q) for q in query_files)


if __name__ == "__main__":
    sys.exit(main())
