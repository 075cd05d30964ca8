"""Regenerate `benchmarks/data/reference_catalogs.json` from the real MCP reference servers.

Installs the servers into a work directory (a temp dir unless `--workdir` is given):
  * npm: @modelcontextprotocol/server-filesystem, -memory, -sequential-thinking (and
    server-everything, which is taken from tests/node_modules when installed there);
  * PyPI, into a fresh venv: mcp-server-git, mcp-server-fetch, mcp-server-time.
Then starts each over stdio with the SDK client (declaring sampling, elicitation and roots,
so server-everything registers its conditional tools too), follows `tools/list` pagination
to the end and writes the tool metadata only: name, title, description, inputSchema.

A server that cannot be installed or started is reported and left out; the output records
the package versions that were used. Not a benchmark: run it when the dataset should follow
newer server releases, then re-check the labels in `data/queries.json`.

    .venv/bin/python benchmarks/make_reference_catalogs.py [--workdir DIR] [--output PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import BENCHMARKS, PYTHON, ROOT

OUTPUT = BENCHMARKS / "data" / "reference_catalogs.json"
NPM_PACKAGES = (
    "@modelcontextprotocol/server-filesystem",
    "@modelcontextprotocol/server-memory",
    "@modelcontextprotocol/server-sequential-thinking",
)
PYPI_PACKAGES = ("mcp-server-git", "mcp-server-fetch", "mcp-server-time")
EVERYTHING_IN_TESTS = ROOT / "tests" / "node_modules" / "@modelcontextprotocol" / "server-everything"
SETTLE_S = 0.5
"""server-everything registers conditional tools just after initialization; list again until stable."""


@dataclass(frozen=True)
class ServerSpec:
    name: str
    package: str
    version: str
    command: str
    args: list[str]
    env: dict[str, str]


def _run(argv: list[str], cwd: Path | None = None) -> bool:
    print("$", " ".join(argv), flush=True)
    result = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        print(f"  failed ({result.returncode}): {result.stderr.strip()[-400:]}", file=sys.stderr)
    return result.returncode == 0


def _npm_version(package_dir: Path) -> str:
    return str(json.loads((package_dir / "package.json").read_text(encoding="utf-8")).get("version", "?"))


def _node_entry(package_dir: Path) -> Path:
    data = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
    binary = data.get("bin")
    entry = next(iter(binary.values())) if isinstance(binary, dict) else binary or data.get("main", "dist/index.js")
    return package_dir / entry


def install(workdir: Path) -> list[ServerSpec]:
    specs: list[ServerSpec] = []
    sandbox = workdir / "sandbox"
    (sandbox / "files").mkdir(parents=True, exist_ok=True)
    (sandbox / "files" / "README.txt").write_text("reference catalog sandbox\n", encoding="utf-8")

    # npm servers
    npm_dir = workdir / "npm"
    npm_dir.mkdir(parents=True, exist_ok=True)
    (npm_dir / "package.json").write_text('{"name": "reference-servers", "private": true}\n', encoding="utf-8")
    npm = shutil.which("npm")
    node = shutil.which("node")
    npm_ok = bool(npm and node) and _run([npm or "npm", "install", "--no-audit", "--no-fund", *NPM_PACKAGES], npm_dir)
    everything = EVERYTHING_IN_TESTS
    everything_package = "@modelcontextprotocol/server-everything"
    if (
        not everything.is_dir()
        and npm_ok
        and _run([npm or "npm", "install", "--no-audit", "--no-fund", everything_package], npm_dir)
    ):
        everything = npm_dir / "node_modules" / "@modelcontextprotocol" / "server-everything"
    if node and everything.is_dir():
        specs.append(
            ServerSpec(
                "everything",
                "@modelcontextprotocol/server-everything",
                _npm_version(everything),
                node,
                [str(_node_entry(everything)), "stdio"],
                {},
            )
        )
    if npm_ok and node:
        modules = npm_dir / "node_modules" / "@modelcontextprotocol"
        extra: dict[str, tuple[list[str], dict[str, str]]] = {
            "filesystem": ([str(sandbox / "files")], {}),
            "memory": ([], {"MEMORY_FILE_PATH": str(sandbox / "memory.jsonl")}),
            "sequential-thinking": ([], {"DISABLE_THOUGHT_LOGGING": "true"}),
        }
        for package in NPM_PACKAGES:
            short = package.rsplit("/server-", 1)[1]
            args, env = extra[short]
            directory = modules / f"server-{short}"
            if directory.is_dir():
                entry = str(_node_entry(directory))
                specs.append(ServerSpec(short, package, _npm_version(directory), node, [entry, *args], env))

    specs += _install_pypi(workdir, sandbox)
    return specs


def _install_pypi(workdir: Path, sandbox: Path) -> list[ServerSpec]:
    """The PyPI servers, in their own venv."""
    specs: list[ServerSpec] = []
    venv = workdir / "venv"
    bin_dir = venv / "bin"
    if _run([PYTHON, "-m", "venv", str(venv)]):
        for package in PYPI_PACKAGES:
            if not _run([str(bin_dir / "pip"), "install", "-q", package]):
                continue
            shown = subprocess.run([str(bin_dir / "pip"), "show", package], capture_output=True, text=True).stdout
            version = next(
                (line.split(":", 1)[1].strip() for line in shown.splitlines() if line.startswith("Version:")), "?"
            )
            short = package.removeprefix("mcp-server-")
            args: list[str] = []
            if short == "git":
                repo = sandbox / "repo"
                if not (repo / ".git").exists():
                    repo.mkdir(exist_ok=True)
                    _run(["git", "init", "-q", str(repo)])
                args = ["--repository", str(repo)]
            elif short == "time":
                args = ["--local-timezone", "UTC"]
            specs.append(ServerSpec(short, package, version, str(bin_dir / package), args, {}))
    return specs


async def dump_tools(spec: ServerSpec, errlog: Any) -> list[dict[str, Any]]:
    import mcp_types as types
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def sampling(*_: Any) -> Any:
        raise RuntimeError("not used")

    async def elicitation(*_: Any) -> Any:
        raise RuntimeError("not used")

    async def roots(*_: Any) -> Any:
        return types.ListRootsResult(roots=[])

    params = StdioServerParameters(command=spec.command, args=spec.args, env={**os.environ, **spec.env})
    transport = stdio_client(params, errlog=errlog)
    async with Client(
        transport,  # type: ignore[arg-type]
        mode="legacy",
        cache=None,
        read_timeout_seconds=60,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    ) as client:
        previous: list[dict[str, Any]] | None = None
        for _ in range(10):
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                tools.extend(_descriptor(t) for t in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            if previous is not None and [t["name"] for t in tools] == [t["name"] for t in previous]:
                return tools
            previous = tools
            await asyncio.sleep(SETTLE_S)
        return previous or []


def _descriptor(tool: Any) -> dict[str, Any]:
    raw = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
    out: dict[str, Any] = {"name": raw["name"]}
    title = raw.get("title") or (raw.get("annotations") or {}).get("title")
    if title:
        out["title"] = title
    out["description"] = raw.get("description") or ""
    out["inputSchema"] = raw.get("inputSchema") or {"type": "object"}
    return out


async def collect(specs: list[ServerSpec], errlog: Any) -> dict[str, Any]:
    servers: dict[str, Any] = {}
    for spec in specs:
        try:
            tools = await asyncio.wait_for(dump_tools(spec, errlog), 90)
        except Exception as exc:
            print(f"  {spec.name}: could not list tools: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        print(f"  {spec.name} ({spec.package} {spec.version}): {len(tools)} tools", flush=True)
        servers[spec.name] = {"package": spec.package, "version": spec.version, "tools": tools}
    return {
        "description": (
            "Tool metadata (name, title, description, inputSchema) of the MCP reference servers and "
            "server-everything, as listed over stdio. Generated by benchmarks/make_reference_catalogs.py."
        ),
        "servers": servers,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workdir", type=Path, default=None, help="install here and keep it (default: a temp dir)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"default {OUTPUT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mcp-reference-servers-") as tmp:
        workdir = args.workdir.resolve() if args.workdir else Path(tmp)
        specs = install(workdir)
        with open(os.devnull, "w") as devnull:  # the servers' stderr
            data = asyncio.run(collect(specs, devnull))
    if not data["servers"]:
        print("no server could be listed; nothing written", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    total = sum(len(s["tools"]) for s in data["servers"].values())
    print(f"wrote {args.output}: {len(data['servers'])} servers, {total} tools")
    return 0


if __name__ == "__main__":
    sys.exit(main())
