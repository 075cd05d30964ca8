"""Importing other clients' configuration: each format from a real-looking file, values kept meaning."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_sidecar.config.import_values import inline_values
from mcp_sidecar.config.imports import ImportInvalid, ImportSource, read_import
from mcp_sidecar.config.jsonc import strip_jsonc

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "imports"


def summary(source: ImportSource) -> dict[str, object]:
    return {c.name: c.definition if c.importable else c.problems for c in source.candidates}


def test_claude_desktop() -> None:
    source = read_import(SAMPLES / "claude_desktop_config.json")
    assert source.format == "mcpServers"
    assert summary(source) == {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_INLINECANARY0123456789"},
        },
        "price$tracker": ["the name must be 1 to 64 letters, digits, `_` or `-` (no dots or spaces)."],
    }
    github = source.candidate("github")
    assert github is not None
    assert github.transport == "stdio"
    assert github.definition is not None
    assert inline_values(github.definition) == ["env.GITHUB_PERSONAL_ACCESS_TOKEN"]


def test_claude_code_keeps_references_and_escapes_literals() -> None:
    source = read_import(SAMPLES / "claude_code.mcp.json")
    assert summary(source) == {
        "sentry": {"url": "https://mcp.sentry.dev/mcp", "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"}},
        "db": {
            "command": "npx",
            "args": ["-y", "@bytebase/dbhub", "--dsn", "${DB_URL}"],
            # `$` and a leading `!` were literal there: escaped so they stay literal (never a secret command).
            "env": {"PGPASSWORD": "${PGPASSWORD}", "CACHE_DIR": "/tmp/$$USER-cache", "BANNER": "$!important"},
        },
        "legacy-events": ["uses SSE, which is not supported (only stdio and Streamable HTTP)."],
    }
    db = source.candidate("db")
    assert db is not None
    assert db.notes == ["`args`: the default of ${DB_URL:-…} is not supported; kept ${DB_URL}."]


def test_cursor_jsonc_with_env_references_and_placeholders() -> None:
    source = read_import(SAMPLES / "cursor_mcp.json")
    assert summary(source) == {
        "linear": {"url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_API_KEY}"}},
        "local-notes": {"command": "node", "args": ["${VSCODE_WORKSPACE_FOLDER}/tools/notes-server.js"]},
    }
    notes = source.candidate("local-notes")
    assert notes is not None
    assert notes.notes == ["dropped `envFile`, which this sidecar does not support."]
    assert [p.to_json() for p in notes.placeholders] == [
        {"field": "args", "variable": "VSCODE_WORKSPACE_FOLDER", "source": "workspaceFolder", "description": None}
    ]


def test_vscode_servers_with_inputs_become_placeholders() -> None:
    source = read_import(SAMPLES / "vscode_mcp.json")
    assert source.format == "vscode"
    assert summary(source) == {
        "perplexity": {
            "command": "npx",
            "args": ["-y", "server-perplexity-ask"],
            "env": {"PERPLEXITY_API_KEY": "${VSCODE_INPUT_PERPLEXITY_KEY}"},
        },
        "github": {
            "url": "https://api.githubcopilot.com/mcp/",
            "headers": {"Authorization": "Bearer ${VSCODE_INPUT_GH_TOKEN}"},
        },
        "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
        "old-sse": ["uses SSE, which is not supported (only stdio and Streamable HTTP)."],
    }
    perplexity = source.candidate("perplexity")
    assert perplexity is not None
    assert [p.to_json() for p in perplexity.placeholders] == [
        {
            "field": "env.PERPLEXITY_API_KEY",
            "variable": "VSCODE_INPUT_PERPLEXITY_KEY",
            "source": "input:perplexity-key",
            "description": "Perplexity API Key",
        }
    ]
    assert perplexity.definition is not None
    assert inline_values(perplexity.definition) == []


def test_vscode_settings_mcp_section() -> None:
    source = read_import(SAMPLES / "vscode_settings.json")
    assert source.format == "vscode"
    assert summary(source) == {
        "memory": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-memory"],
            "env": {"MEMORY_FILE_PATH": "${HOME}/.memory.json"},
        }
    }


def test_codex_toml() -> None:
    source = read_import(SAMPLES / "codex_config.toml")
    assert source.format == "codex"
    assert summary(source) == {
        "docs": {
            "command": "npx",
            "args": ["-y", "mcp-server-docs"],
            "env": {"API_KEY": "sk-INLINECANARY987", "PRICE": "$$5"},
            "timeoutMs": 60000,
        },
        "figma": {
            "url": "https://mcp.figma.com/mcp",
            "headers": {"Authorization": "Bearer ${FIGMA_TOKEN}", "X-Region": "eu", "X-Org": "${FIGMA_ORG}"},
        },
        "scratch": {
            "command": "scratch-server",
            "disabled": True,
            "includeTools": ["read", "list"],
            "excludeTools": ["delete"],
            "env": {"HOME_DIR": "${HOME_DIR}"},
            "cwd": "/srv/scratch",
        },
        "bad.name": ["the name must be 1 to 64 letters, digits, `_` or `-` (no dots or spaces)."],
    }


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (None, "missing.json", "no such file."),
        ("{not json", "broken.json", "neither JSON nor TOML."),
        ('{"other": {}}', "other.json", "no `mcpServers`, `servers` or `mcp_servers` table found."),
        ("[1]", "list.json", "the top level must be an object."),
        ('model = "x"', "config.toml", "no `[mcp_servers.NAME]` tables found."),
        ("model = ", "config.toml", "invalid TOML."),
    ],
)
def test_unreadable_or_unknown_files(tmp_path: Path, content: str | None, name: str, message: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportInvalid) as caught:
        read_import(path)
    assert caught.value.message == f"{path}: {message}"


def test_jsonc_keeps_comment_markers_inside_strings() -> None:
    text = '{\n // c "x"\n "a": "http://x//y", /* c */ "b": [1, 2,], "c": "q\\"//",\n}'
    assert strip_jsonc(text) == '{\n \n "a": "http://x//y",  "b": [1, 2], "c": "q\\"//"\n}'
