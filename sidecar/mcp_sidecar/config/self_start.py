"""mcp-sidecar never starts itself as one of its own servers.

A host's project configuration can be the sidecar's too: Claude Code reads the project's
`.mcp.json`, and so does the sidecar. A gateway defined there (`mcp-sidecar mcp --project .
--trust-project`) would start a gateway with the same configuration as its server, which starts
the next, without end. Two defences, both applied before a stdio server is started:

- **The command line.** A definition whose command runs mcp-sidecar, however it is spelled
  (the console script by any path, `python -m mcp_sidecar`, through `env`, `nice`, `timeout`,
  `sh -c '...'`, `npx`, `uvx`, `uv run`, `pipx run` and the like), in a mode that reads the
  configuration and starts servers, is refused when that copy would read this very definition:
  a global definition (the copy reads the same global file), or a project definition whose copy
  trusts this same project. A sidecar for another project, or with another `MCP_SIDECAR_HOME`,
  is a legitimate server and starts.
- **The chain.** Every stdio server is started with `MCP_SIDECAR_SERVER_CHAIN`: the chain the
  sidecar itself was started with, plus a key of the definition it starts (a hash of the
  definition as written, `${VAR}` references unresolved, and its working directory). A sidecar
  started that way (directly, or through a wrapper script nothing can recognise) refuses a
  definition whose key is already in its chain: its parent started it through that same
  definition, so starting it again repeats the cycle. Its other servers run as usual; a nested
  sidecar that uses other definitions (a server script calling `mcp-sidecar call other.tool`,
  a gateway for another project) is not affected. Past `MAX_NESTING` sidecars in a chain, no
  stdio server starts at all, whatever the definitions.

Both refusals are the diagnostic `server_starts_itself`, naming the definition.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from mcp_sidecar import fs
from mcp_sidecar.config import paths

CHAIN_ENV = "MCP_SIDECAR_SERVER_CHAIN"
MAX_NESTING = 8
"""Sidecars started one by the other, at most; beyond, none starts a stdio server."""
_KEY = re.compile(r"[0-9a-f]{16}")
_UNWRAP_STEPS = 24
"""Wrappers peeled off one command line at most (`env nice timeout sh -c '...'`)."""

Mode = Literal["editor", "serving", "other"]


def chain_key(raw: Mapping[str, Any], cwd: str | None) -> str:
    """Which definition started a server: the definition as written and where it runs."""
    material = json.dumps({"def": raw, "cwd": cwd or ""}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


def inherited_chain(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The keys of the definitions that started this client's sidecar and its ancestors (empty at the top),
    from the client's environment (a front started as an engine's server carries the chain it was
    given; the engine's own environment knows nothing of it).

    A damaged value still counts its entries, so a chain cannot be reset by garbling it."""
    text = environ.get(CHAIN_ENV, "")
    return tuple(part if _KEY.fullmatch(part) else "?" for part in text.split(",") if part)


def passed_on(chain: Sequence[str], key: str) -> str:
    return ",".join([*chain, key])


@dataclass(frozen=True, slots=True)
class Invocation:
    """mcp-sidecar found in a command line: how it would run."""

    mode: Mode
    project: str | None
    """`--project` as given (relative to `cwd`), None without one."""
    trusts_project: bool
    cwd: str
    env: dict[str, str]
    """The server's environment as given to `invocation`, with what the wrappers set or unset."""
    words: tuple[str, ...]
    """mcp-sidecar's own arguments."""


@dataclass(frozen=True, slots=True)
class _Line:
    words: tuple[str, ...]
    cwd: str
    env: dict[str, str]


def invocation(command: str, args: Sequence[str], cwd: str, env: Mapping[str, str]) -> Invocation | None:
    """How `command args` runs mcp-sidecar, through wrappers; None when it does not (as far as can be seen).

    `env` is what the server starts with (its `PATH` finds a bare command, as the process start does)."""
    pending = [_Line((command, *args), cwd, dict(env))]
    for _ in range(_UNWRAP_STEPS):
        if not pending:
            return None
        line = pending.pop(0)
        if not line.words:
            continue
        found = _program(line)
        if isinstance(found, Invocation):
            return found
        pending.extend(found)
    return None


def _program(line: _Line) -> Invocation | list[_Line]:
    """The sidecar itself, or the command lines `line` runs (a wrapper's inner command)."""
    word = line.words[0]
    name = _base(word)
    rest = line.words[1:]
    if name in ("mcp-sidecar", "mcp_sidecar"):
        return _sidecar(rest, line)
    if _PYTHON.fullmatch(name):
        return _python(rest, line)
    if name == "env":
        return _env(rest, line)
    if name in _SHELLS:
        return _shell(rest, line)
    if name in _WRAPPERS:
        return [replace(line, words=_skip_options(rest, _WRAPPERS[name]))]
    if name in _RUNNERS:
        return _runner(name, rest, line)
    if _is_console_script(word, line):
        return _sidecar(rest, line)
    return []


def _base(word: str) -> str:
    name = word.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return name.removesuffix(".exe")


_PYTHON = re.compile(r"(python|pypy)(\d+(\.\d+)*)?w?")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"})
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    # name: (options that take a value, positional words to skip before the command)
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "ionice": (frozenset({"-c", "-n", "-p", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset(), 1),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "xvfb-run": (frozenset({"-n", "-s", "-f", "-e", "-p"}), 0),
}


def _skip_options(words: Sequence[str], spec: tuple[frozenset[str], int]) -> tuple[str, ...]:
    """`words` after the wrapper's options and its own positional words (a duration, a priority)."""
    takes_value, positional = spec
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        if words[i] == "--":
            i += 1
            break
        i += 2 if words[i] in takes_value else 1
    return tuple(words[i + positional :])


def _env(words: Sequence[str], line: _Line) -> list[_Line]:
    """`env [-i] [-u NAME] [-C DIR] [NAME=VALUE ...] command ...`, and `env -S 'command ...'`."""
    env, cwd = dict(line.env), line.cwd
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return [_Line(tuple(words[i + 1 :]), cwd, env)]
        if word in ("-S", "--split-string") or word.startswith("--split-string="):
            text = word.partition("=")[2] if "=" in word else _at(words, i + 1)
            return [_Line((*_split(text), *words[i + (1 if "=" in word else 2) :]), cwd, env)]
        if not word.startswith("-"):
            if "=" not in word or word.startswith("="):
                break
            name, _, value = word.partition("=")
            env[name] = value
            i += 1
            continue
        i, cwd = _env_option(words, i, env, cwd)
    return [_Line(tuple(words[i:]), cwd, env)]


def _env_option(words: Sequence[str], i: int, env: dict[str, str], cwd: str) -> tuple[int, str]:
    """`env`'s option at `words[i]`, applied to `env` (in place) and the directory: the next index, the directory."""
    option, has_value, value = words[i].partition("=")
    takes = option in ("-u", "--unset", "-C", "--chdir")
    if takes and not has_value:
        value = _at(words, i + 1)
    if option in ("-i", "--ignore-environment", "-"):
        env.clear()
    elif option in ("-u", "--unset"):
        env.pop(value, None)
    elif option in ("-C", "--chdir"):
        cwd = os.path.join(cwd, value)
    return i + (2 if takes and not has_value else 1), cwd


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return []


def _shell(words: Sequence[str], line: _Line) -> list[_Line]:
    """`sh -c 'SCRIPT'` (any flags holding `c`): each simple command of the script."""
    for i, word in enumerate(words):
        if not word.startswith("-") or word.startswith("--"):
            return []  # a script file: what it runs cannot be seen here
        if "c" in word[1:] and i + 1 < len(words):
            return _script(words[i + 1], line)
    return []


_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "(", ")", "\n"})


def _script(script: str, line: _Line) -> list[_Line]:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return []
    out: list[_Line] = []
    cwd, env = line.cwd, dict(line.env)
    segment: list[str] = []
    for token in [*tokens, ";"]:
        if token not in _OPERATORS:
            segment.append(token)
            continue
        if segment and segment[0] == "cd" and len(segment) > 1:
            cwd = os.path.join(cwd, segment[1])
        elif segment and segment[0] == "export":
            env.update(_assignments(segment[1:])[1])
        elif segment:
            words, assigned = _assignments(segment)
            out.append(_Line(words, cwd, {**env, **assigned}))
        segment = []
    return out


def _assignments(words: Sequence[str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """`NAME=VALUE ... command args`: the command line, and the variables set for it."""
    assigned: dict[str, str] = {}
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i], re.DOTALL):
        name, _, value = words[i].partition("=")
        assigned[name] = value
        i += 1
    return tuple(words[i:]), assigned


_RUNNERS: dict[str, tuple[tuple[str, ...], ...]] = {
    # name: the verbs that make it run a package or command (none: it always does)
    "npx": ((),),
    "bunx": ((),),
    "uvx": ((),),
    "uv": (("tool", "run"), ("run",)),
    "npm": (("exec",), ("x",)),
    "pnpm": (("dlx",), ("exec",)),
    "yarn": (("dlx",), ("exec",)),
    "bun": (("x",),),
    "pipx": (("run",),),
    "poetry": (("run",),),
    "pdm": (("run",),),
    "hatch": (("run",),),
}
_RUNNER_VALUES = frozenset(
    {"--python", "--with", "--index", "--index-url", "--extra-index-url", "--directory", "--project"}
    | {"--env-file", "-e", "--env", "-w", "--workspace", "--cache-dir", "--registry"}
)
_PACKAGE_OPTIONS = frozenset({"-p", "--package", "--from", "--spec"})
"""Options that name the package the command comes from (`uvx --from mcp-sidecar mcp-sidecar`)."""
_PACKAGE_NAMES = frozenset({"mcp-sidecar", "mcp_sidecar"})


def _package(spec: str) -> str:
    """`mcp-sidecar` of `mcp-sidecar@1.2`, `mcp_sidecar==1`, `@scope/mcp-sidecar@latest`, `mcp-sidecar[x]`."""
    bare = spec.split("/", 1)[1] if spec.startswith("@") and "/" in spec else spec
    return re.split(r"@|==|>=|<=|~=|!=|<|>|\[", bare, maxsplit=1)[0].lower()


def _runner(name: str, words: Sequence[str], line: _Line) -> list[_Line]:
    """`npx mcp-sidecar`, `uvx mcp-sidecar@1`, `uv run -- mcp-sidecar`, `pipx run mcp-sidecar`, ..."""
    for verb in _RUNNERS[name]:
        if tuple(words[: len(verb)]) == verb:
            rest = words[len(verb) :]
            break
    else:
        return []  # `npm install`, `poetry add`, `uv sync`: no command runs
    from_sidecar = False
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        option, has_value, value = rest[i].partition("=")
        if rest[i] == "--":
            i += 1
            break
        if option in ("-c", "--call"):
            return [_Line(tuple(_split(value if has_value else _at(rest, i + 1))), line.cwd, line.env)]
        if option in _PACKAGE_OPTIONS:
            from_sidecar = from_sidecar or _package(value if has_value else _at(rest, i + 1)) in _PACKAGE_NAMES
        i += 2 if not has_value and (option in _RUNNER_VALUES or option in _PACKAGE_OPTIONS) else 1
    inner = rest[i:]
    if not inner:
        return []
    if from_sidecar or _package(inner[0]) in _PACKAGE_NAMES:
        return [_Line(("mcp-sidecar", *inner[1:]), line.cwd, line.env)]
    return [_Line(tuple(inner), line.cwd, line.env)]


def _at(words: Sequence[str], i: int) -> str:
    return words[i] if i < len(words) else ""


_SIDECAR_MODULES = frozenset({"mcp_sidecar", "mcp_sidecar.__main__", "mcp_sidecar.cli", "mcp_sidecar.entry"})


def _python(words: Sequence[str], line: _Line) -> Invocation | list[_Line]:
    """`python [-I -u ...] -m mcp_sidecar ...`, `python -c '...mcp_sidecar...'`, `python path/to/mcp-sidecar`."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "-":
            return []  # a program on stdin
        if not word.startswith("-"):
            return _sidecar(words[i + 1 :], line) if _is_sidecar_script(word) else []
        if word.startswith("--"):
            i += 2 if word == "--check-hash-based-pycs" else 1
            continue
        flags = word[1:]
        for at, flag in enumerate(flags):
            if flag not in "mcXW":
                continue
            attached = flags[at + 1 :]
            value = attached or _at(words, i + 1)
            after = words[i + 1 :] if attached else words[i + 2 :]
            if flag == "m":
                return _sidecar(after, line) if value in _SIDECAR_MODULES else []
            if flag == "c":
                return _sidecar(after, line) if "mcp_sidecar" in value and "main" in value else []
            i += 0 if attached else 1  # -X and -W take a value
            break
        i += 1
    return []


def _is_sidecar_script(path: str) -> bool:
    script = path.replace("\\", "/")
    return _base(script) in ("mcp-sidecar", "mcp_sidecar") or script.endswith(
        ("mcp_sidecar/__main__.py", "mcp_sidecar/cli.py", "mcp_sidecar/entry.py")
    )


def _is_console_script(word: str, line: _Line) -> bool:
    """A program found on PATH (or by its path) whose real file is mcp-sidecar's console script."""
    path = word if "/" in word else shutil.which(word, path=line.env.get("PATH", os.defpath))
    if not path:
        return False
    real = os.path.realpath(os.path.join(line.cwd, path))
    if _base(real) == "mcp-sidecar":
        return True
    try:
        # Never blocks on a FIFO, never reads a directory: a peek at a script's first line.
        with os.fdopen(fs.open_regular(real, own=False, follow=True), "rb") as handle:
            head = handle.read(512)
    except (OSError, ValueError):
        return False
    return head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0] and b"from mcp_sidecar" in head


_SERVING = frozenset(
    {"mcp", "status", "get", "tools", "logs", "discover", "refresh", "activate", "run", "call", "read"}
    | {"complete", "prompt", "login", "logout"}
)
"""Subcommands that read the configuration and may start its servers."""


def _sidecar(words: Sequence[str], line: _Line) -> Invocation | list[_Line]:
    subcommand: str | None = None
    project: str | None = None
    trusts = False
    i = 0
    while i < len(words):
        word = words[i]
        option, has_value, value = word.partition("=")
        if word in ("-h", "--help", "--version") or (subcommand is None and word == "--"):
            return []  # prints and exits: no server
        if len(option) >= 3 and "--project".startswith(option) and option != "--":
            if not has_value:
                value = words[i + 1] if i + 1 < len(words) else ""
                i += 1
            project = value
        elif len(option) >= 4 and "--trust-project".startswith(option):
            trusts = True
        elif option in ("--log-file", "--lo", "--log") and not has_value:
            i += 1
        elif subcommand is None and not word.startswith("-"):
            subcommand = word
        i += 1
    mode: Mode = "editor" if subcommand in (None, "serve") else "serving" if subcommand in _SERVING else "other"
    return Invocation(mode, project, trusts, line.cwd, line.env, tuple(words))


# -- the decisions ---------------------------------------------------------------------------


def _config_dir_for(env: Mapping[str, str]) -> str:
    """The config directory a sidecar started with `env` (plus the inherited basics) reads."""
    home = env.get(paths.HOME_ENV)
    if home:
        return os.path.realpath(os.path.expanduser(home))
    if sys.platform.startswith(("darwin", "win")):
        import platformdirs

        return os.path.realpath(platformdirs.user_config_dir(paths.APP_NAME, appauthor=False))
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(env.get("HOME", os.path.expanduser("~")), ".config")
    return os.path.realpath(os.path.join(base, paths.APP_NAME))


def _own_config_dir() -> str | None:
    try:
        return os.path.realpath(paths.config_dir())
    except paths.InvalidHome:
        return None


def refusal(
    scope: str,
    found: Invocation,
    workspace: Path | None,
    child_env: Mapping[str, str],
) -> str | None:
    """Why a definition that runs mcp-sidecar as `found` would start this sidecar as its own server, or None.

    `child_env` is what the server would start with (the inherited basics and the definition's
    own variables)."""
    if found.mode == "other":
        return None
    if found.mode == "editor":
        return (
            "The definition runs mcp-sidecar itself (its editor mode, no MCP server), which reads this same "
            "configuration; it is not started."
        )
    if scope == "project":
        here = os.path.realpath(workspace) if workspace is not None else None
        there = os.path.realpath(os.path.join(found.cwd, found.project or "."))
        if not (found.trusts_project and here is not None and there == here):
            return None  # another project, or this one untrusted: its servers are others
    elif _config_dir_for({**child_env, **found.env}) != _own_config_dir():
        return None  # another MCP_SIDECAR_HOME: another global file
    words = shlex.join(["mcp-sidecar", *found.words])
    return (
        f"The definition runs {words}, which reads this same configuration and would start the definition "
        "again as its own server, and that copy the next, without end; it is not started."
    )


def chain_refusal(chain: Sequence[str], key: str) -> str | None:
    """Why the chain this sidecar was started with forbids starting the definition keyed `key`, or None."""
    if key in chain:
        return (
            "This sidecar was itself started, as another mcp-sidecar's server, through this same definition: "
            "starting it would repeat that without end, so it is not started."
        )
    if len(chain) >= MAX_NESTING:
        return (
            f"This sidecar is the {len(chain) + 1}th mcp-sidecar started one by the other as a server; "
            "past that depth no server is started."
        )
    return None
