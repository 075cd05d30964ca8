"""The one line a person approves a project definition by: what it runs or connects to, and every
value that decides what runs, where data goes or what is granted.

Everything is shown as written (`${VAR}` references unresolved), never cut, with invisible and
control characters escaped. The one thing hidden is what looks like a credential: a literal
env or header value whose name says so (`TOKEN`, `API_KEY`, `Authorization`, `Cookie`, ...) or
whose value has a credential's shape (`ghp_...`, `sk-...`, a JWT, a private key), and the user
information of a URL (`https://<hidden>@host`). Everything a loader, shell or runtime reads at
start-up (`STARTUP_NAMES`, `STARTUP_PREFIXES`: `LD_PRELOAD`, `BASH_FUNC_x%%`, `NODE_OPTIONS`,
`PYTHONSTARTUP`, `GCONV_PATH`, ...) is shown even when its value looks like a token, and a `!command`
or a value holding a `${VAR}` reference is always shown: what runs, and which of the person's
variables go where, is never hidden.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_sidecar.config.approvals import UNHASHED_FIELDS
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.profiles import Profile
from mcp_sidecar.output.command_text import quote_word
from mcp_sidecar.output.sanitize import strip_controls

STARTUP_NAMES = frozenset(
    # shells and the C library
    {"PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND"}
    | {"IFS", "CDPATH", "GLOBIGNORE", "INPUTRC", "FPATH", "TMPDIR", "GCONV_PATH", "LOCPATH", "NLSPATH"}
    | {"HOSTALIASES", "RESOLV_HOST_CONF", "TZDIR", "MALLOC_CONF", "MALLOC_CHECK_"}
    # TLS, proxies and helper programs
    | {"OPENSSL_CONF", "OPENSSL_MODULES", "OPENSSL_ENGINES", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE"}
    | {"REQUESTS_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy"}
    | {"all_proxy", "no_proxy", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER"}
    | {"SSH_ASKPASS", "SUDO_ASKPASS", "GIT_ASKPASS", "DISPLAY", "SSH_AUTH_SOCK"}
    # runtimes
    | {"CLASSPATH", "JAVA_HOME", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS"}
    | {"MAVEN_OPTS", "GRADLE_OPTS", "ELECTRON_RUN_AS_NODE", "VIRTUAL_ENV", "PHPRC", "PHP_INI_SCAN_DIR"}
    | {"TCLLIBPATH", "EMACSLOADPATH", "VIMINIT", "EXINIT", "MYVIMRC", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON"}
    | {"R_ENVIRON_USER", "R_LIBS", "R_LIBS_USER", "JULIA_DEPOT_PATH", "JULIA_LOAD_PATH", "ERL_AFLAGS", "ERL_ZFLAGS"}
    | {"ERL_LIBS", "GOFLAGS", "GOPATH", "GOROOT", "GOBIN", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB"}
    | {"GOSUMDB", "GOINSECURE", "GOTOOLCHAIN", "GOENV", "GOEXPERIMENT", "GODEBUG", "GOWORK", "GOCACHE", "GOOS"}
    | {"GOARCH", "RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS", "RUSTDOC"}
)
"""Variables a loader, shell or runtime reads at start-up: always shown as written."""
STARTUP_PREFIXES = (
    "LD_", "DYLD_", "BASH_FUNC_", "XDG_", "PYTHON", "PIP_", "UV_", "CONDA_", "PYENV_", "NODE_", "NPM_CONFIG_",
    "YARN_", "COREPACK_", "DENO_", "BUN_", "PERL", "RUBY", "GEM_", "BUNDLE_", "LUA_", "CGO_", "CARGO_", "RUSTUP_",
    "DOTNET_", "COMPLUS_", "CORECLR_", "GIT_", "LC_", "GLIBC_", "NIX_",
)  # fmt: skip
"""Families of start-up variables; a name among them that looks like a credential is still hidden
(`NODE_AUTH_TOKEN`, `CARGO_REGISTRY_TOKEN`)."""

_CREDENTIAL_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|AUTH|COOKIE|SESSION|SIGNATURE"
    r"|BEARER|(^|_)JWT($|_)|(^|_)KEYS?($|_)|(^|_)PASS($|_)|(^|_)PAT($|_)|(^|_)PW($|_)|._PWD$|(^|_)DSN($|_)"
    r"|CONNECTION_?STRING"
)
_CREDENTIAL_VALUE = re.compile(
    r"(gh[pousr]_|github_pat_|glpat-|sk-|sk_live_|rk_live_|xox[abprs]-|AKIA|ASIA|AIza|npm_|hf_|eyJ)[A-Za-z0-9_\-.=+/]{8,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")
_REFERENCE = re.compile(r"\$\{?[A-Za-z_]")
HIDDEN = "<literal hidden>"


def startup_name(name: str) -> bool:
    return name in STARTUP_NAMES or name.upper() in STARTUP_NAMES or name.upper().startswith(STARTUP_PREFIXES)


def credential_name(name: str) -> bool:
    """`API_KEY`, `x-auth-token`, `Authorization`, `DB_PASSWORD`...; not `PWD` (the working directory)."""
    if name in ("SSH_ASKPASS", "SUDO_ASKPASS", "GIT_ASKPASS", "SSH_AUTH_SOCK"):
        return False  # programs and sockets, however their names read
    return bool(_CREDENTIAL_NAME.search(name.upper().replace("-", "_")))


def shown_value(name: str, value: Any) -> str:
    """An env or header value as the approval shows it (see the module's docstring)."""
    text = str(value)
    if text.startswith("!") or _REFERENCE.search(text):
        return text  # a command that runs, or which variables go where: never hidden
    if credential_name(name) or (not startup_name(name) and _CREDENTIAL_VALUE.search(text)):
        return HIDDEN
    return _USERINFO.sub(r"\1<hidden>@", text)


def shown_url(url: str) -> str:
    """The server's URL whole, but for a literal password in it (`https://<hidden>@host/...`)."""
    return url if _REFERENCE.search(url) else _USERINFO.sub(r"\1<hidden>@", url)


def _entries(values: dict[str, Any]) -> str:
    return ", ".join(f"{name}={shown_value(str(name), value)}" for name, value in values.items())


def summary(server: ServerConfig, changed: list[str] | None = None) -> str:
    """What the definition runs or connects to, and every value that matters, on one line."""
    raw = server.raw
    extras: list[str] = []
    if server.transport == "stdio":
        words = [str(raw.get("command", "")), *(str(a) for a in raw.get("args", []) or [])]
        text = " ".join(quote_word(word) for word in words)
        if isinstance(raw.get("cwd"), str):
            extras.append(f"cwd: {quote_word(raw['cwd'])}")
        if isinstance(raw.get("env"), dict) and raw["env"]:
            extras.append(f"env: {_entries(raw['env'])}")
    else:
        text = shown_url(str(raw.get("url", "")))
        if isinstance(raw.get("headers"), dict) and raw["headers"]:
            extras.append(f"headers: {_entries(raw['headers'])}")
    extras += _oauth(raw)
    if isinstance(raw.get("description"), str):
        # What the model will read about this server (the server directory): shown whole.
        extras.append(f"tells the model: {quote_word(raw['description'])}")
    others = [key for key in raw if key not in _SHOWN and key not in UNHASHED_FIELDS]
    if others:
        extras.append("also sets: " + ", ".join(f"{key}={_json(raw[key])}" for key in others))
    if changed:
        extras.append("changed: " + ", ".join(changed))
    if extras:
        text += f" ({'; '.join(extras)})"
    return visible(text)


def profile_summary(profile: Profile, changed: list[str] | None = None) -> str:
    """A project profile: which servers a client choosing it searches, and which tools it activates."""
    searched = ", ".join(quote_word(s) for s in profile.servers) if profile.servers is not None else "every server"
    parts = [f"profile: searches {searched}"]
    if profile.activate:
        parts.append("activates " + ", ".join(quote_word(i) for i in profile.activate))
    if profile.description is not None:
        parts.append(f"described as {quote_word(profile.description)}")
    if changed:
        parts.append("changed: " + ", ".join(changed))
    return visible("; ".join(parts))


_OAUTH_LABELS = {
    "oauthClientId": "OAuth client id",
    "oauthClientSecret": "OAuth client secret",
    "oauthClientMetadataUrl": "OAuth client metadata",
    "oauthIssuer": "OAuth issuer",
    "oauthScopes": "OAuth scopes",
    "oauthCallbackPort": "OAuth callback port",
    "oauthDpop": "OAuth DPoP",
}
"""Who the login talks to, as which client, and what it asks to be granted: each value shown."""


def _oauth(raw: dict[str, Any]) -> list[str]:
    out = []
    for key, label in _OAUTH_LABELS.items():
        if key not in raw:
            continue
        value = raw[key]
        if key == "oauthClientSecret":
            # A `!command` runs when the server logs in or refreshes: shown verbatim, like env's.
            shown = shown_value("secret", value)
        elif key == "oauthScopes" and isinstance(value, list):
            shown = " ".join(quote_word(str(s)) for s in value)
        elif isinstance(value, str):
            shown = value
        else:
            shown = _json(value)
        out.append(f"{label}: {shown}")
    return out


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_SHOWN = frozenset({"type", "command", "args", "cwd", "env", "url", "headers", "description", *_OAUTH_LABELS})


def visible(text: str) -> str:
    """`text` with every character a person cannot see written as an escape (`\\u202e`), never removed:
    what a person approves must be all there is."""
    if text.isascii() and text.isprintable():
        return text
    # Printable to Python is not enough: variation selectors and fillers show as nothing.
    return "".join(c if c == " " or (c.isprintable() and strip_controls(c) == c) else _escape(c) for c in text)


def _escape(char: str) -> str:
    point = ord(char)
    return f"\\u{point:04x}" if point <= 0xFFFF else f"\\U{point:08x}"
