#!/usr/bin/env bash
# make demo: a vcuda-server and a client process doing CUDA-style work through
# it. Without a GPU the server runs the CI stand-in executor and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir demo

echo "== starting vcuda-server (no CUDA executor in this build yet: using the CI stand-in for a GPU)"
start_server build/release/bin/vcuda-server
sed 's/^/   server: /' "$VC_TMP/server.log"
echo "== running vcuda-demo"
build/release/demo/vcuda-demo
stop_server
echo "== server log"
sed 's/^/   server: /' "$VC_TMP/server.log"
