#!/usr/bin/env bash
# make bench: transport benchmarks against a vcuda-server in another process.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir bench

echo "== ring and arena: a CUDA program over the guest libcuda.so.1 <-> vcuda-server process (CI stand-in driver), $(nproc) cores"
start_server build/release/bin/vcuda-server
build/release/bench/ring_bench "$@"
stop_server

# On a machine with an NVIDIA GPU: CUDA native vs through vcuda, same run.
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	bash ci/bench-gpu.sh
else
	echo "(no GPU here: the CUDA native-vs-vcuda ratios run on the GPU machine: make bench there)"
fi
