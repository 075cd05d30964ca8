"""How each host is configured and started against the gateway and the fake model.

Each host gets a private HOME (and its own config directory in it), the gateway as a stdio MCP
server named `sidecar` behind the logging wrapper (`rpc_tee.py`), and the fake model's address.
The files written here are the ones docs/gateway.md shows, plus the fake model's parts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.servers import TESTS_DIR

NODE_BIN = TESTS_DIR / "hosts" / "node_modules" / ".bin"
SERVER = "sidecar"
"""The name each host knows the gateway by."""
API_KEY = "fake-model-key"


@dataclass(frozen=True)
class Setup:
    """What a host run needs to know: where things are, and the options the test chose."""

    home: Path
    work: Path
    port: int
    gateway: list[str]
    gateway_env: dict[str, str]
    prompt: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]


def _base_env(setup: Setup) -> dict[str, str]:
    """A clean environment in the private HOME; `options["env"]` adds variables (to debug a host)."""
    return {
        **setup.options.get("env", {}),
        "HOME": str(setup.home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "XDG_CONFIG_HOME": str(setup.home / ".config"),
        "XDG_CACHE_HOME": str(setup.home / ".cache"),
        "XDG_DATA_HOME": str(setup.home / ".local" / "share"),
        "XDG_STATE_HOME": str(setup.home / ".local" / "state"),
    }


def server_entry(setup: Setup) -> dict[str, Any]:
    """The gateway as an `mcpServers` entry (Claude Code's and Gemini CLI's shape)."""
    return {"command": setup.gateway[0], "args": setup.gateway[1:], "env": setup.gateway_env}


def claude_code(setup: Setup) -> Launch:
    """`claude -p` with `--mcp-config` and `--strict-mcp-config` (no other MCP server), stream-json
    output; `--allowedTools mcp__sidecar` lets every tool of the gateway run (without it `-p`
    refuses each call: "Claude requested permissions to use …"); `tool_search: False` turns
    Claude Code's tool search off."""
    config = setup.home / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {SERVER: {"type": "stdio", **server_entry(setup)}}}, indent=2))
    env = {
        **_base_env(setup),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{setup.port}",
        "ANTHROPIC_API_KEY": API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CONFIG_DIR": str(setup.home / ".claude"),
    }
    if setup.options.get("tool_search") is False:
        env["ENABLE_TOOL_SEARCH"] = "false"
    argv = [
        str(NODE_BIN / "claude"),
        "-p",
        setup.prompt,
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--allowedTools",
        f"mcp__{SERVER}",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    return Launch(argv, env)


def codex_config(setup: Setup) -> str:
    """`CODEX_HOME/config.toml`: the fake model as a Responses provider, the gateway required and
    its tools approved (without `default_tools_approval_mode = "approve"` each call fails: "MCP
    tool call requires approval, but approval policy is never"); `features` names Codex feature
    flags to turn on (`mcp_tool_list_changed`)."""
    gateway = json.dumps(setup.gateway[0])
    args = json.dumps(setup.gateway[1:])
    env = ", ".join(f"{name} = {json.dumps(value)}" for name, value in setup.gateway_env.items())
    lines = [
        'model = "gpt-5.1-codex"',
        'model_provider = "fake"',
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        "",
        "[model_providers.fake]",
        'name = "fake model"',
        f'base_url = "http://127.0.0.1:{setup.port}/v1"',
        'wire_api = "responses"',
        'env_key = "FAKE_MODEL_API_KEY"',
        "",
        f"[mcp_servers.{SERVER}]",
        f"command = {gateway}",
        f"args = {args}",
        f"env = {{ {env} }}",
        "required = true",
        'default_tools_approval_mode = "approve"',
    ]
    # Quiet: no metrics, no plugin or app catalogs fetched at start (in the tests' namespace
    # they could not be; Codex would wait 5 s at exit for the metrics).
    lines += ["", "[analytics]", "enabled = false", "", "[otel]", 'metrics_exporter = "none"']
    features = {"plugins": False, "apps": False, **{name: True for name in setup.options.get("features") or []}}
    lines += ["", "[features]", *(f"{name} = {str(on).lower()}" for name, on in features.items())]
    return "\n".join(lines) + "\n"


def codex(setup: Setup) -> Launch:
    codex_home = setup.home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(setup))
    env = {**_base_env(setup), "CODEX_HOME": str(codex_home), "FAKE_MODEL_API_KEY": API_KEY}
    argv = [str(NODE_BIN / "codex"), "exec", "--skip-git-repo-check", "--json", setup.prompt]
    return Launch(argv, env)


def gemini_settings(setup: Setup) -> dict[str, Any]:
    """`~/.gemini/settings.json`: API-key auth, the gateway trusted (no confirmation per call)."""
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "mcpServers": {SERVER: {**server_entry(setup), "trust": True}},
    }


def gemini_cli(setup: Setup) -> Launch:
    gemini_dir = setup.home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "settings.json").write_text(json.dumps(gemini_settings(setup), indent=2))
    env = {
        **_base_env(setup),
        "GEMINI_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{setup.port}",
    }
    # `trust: true` lets the gateway's tools run without a confirmation (no `--yolo` needed);
    # `--skip-trust` trusts the working folder, without which a headless run exits 55.
    argv = [str(NODE_BIN / "gemini"), "-p", setup.prompt, "--skip-trust", "--output-format", "stream-json"]
    return Launch(argv, env)


HOSTS: dict[str, tuple[str, Callable[[Setup], Launch]]] = {
    "claude": ("anthropic", claude_code),
    "codex": ("responses", codex),
    "gemini": ("gemini", gemini_cli),
}
"""Each host: the model API it speaks, and how it is started."""
