#!/usr/bin/env bash
# make bench: transport benchmarks against a vcuda-server in another process.
set -euo pipefail
cd "$(dirname "$0")/.."
VC_TMP=$(mktemp -d /tmp/vcuda-bench.XXXXXX)
export VC_TMP
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$VC_TMP"' EXIT
. ci/lib.sh

echo "== ring and arena: client process <-> vcuda-server process (CI stand-in executor), $(nproc) cores"
start_server build/release/bin/vcuda-server
build/release/bench/ring_bench --socket "$VCUDA_SOCKET" "$@"
stop_server
