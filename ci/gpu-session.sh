#!/usr/bin/env bash
# Every GPU check in one run on the GPU machine, so that one device call
# (its time is scarce) measures them all. Each step has a time limit, writes
# its whole log to $OUT/<step>.log and one summary line to stdout; the run
# goes on past a failing step. Build here first and carry:
#   make -j2 build && ci/vm-test.sh --pack build/vmpack
# then on the GPU machine (the toolkit there builds the GPU suite):
#   OUT=$OUT bash ci/gpu-session.sh [step ...]
# Steps: smoke test-gpu bench vm gpushare mgmt (default: all, in that order).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vcuda-gpu-session}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(smoke test-gpu bench vm gpushare mgmt)

run() { # NAME LIMIT_S CMD...
	local name=$1 limit=$2 t0=$SECONDS rc
	shift 2
	timeout -k 10 "$limit" "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	printf '%-10s rc=%-3d %4ds  %s\n' "$name" "$rc" $((SECONDS - t0)) \
		"$(grep -E 'passed|PASS|FAIL|ratio|vm-test: pass|ok -|not ok' "$OUT/$name.log" | tail -1)"
}

for s in "${steps[@]}"; do
	case $s in
	smoke) run smoke 60 sh -c 'nvidia-smi -L && nvidia-smi --query-gpu=driver_version,memory.used --format=csv' ;;
	test-gpu) run test-gpu 420 env OUT="$OUT/test-gpu" bash ci/test-gpu.sh ;;
	bench) run bench 240 bash ci/bench-gpu.sh ;;
	vm) run vm 500 env EXECUTOR=cuda VM_PREBUILT=build/vmpack GPU_SUITE=build/gpu-tests \
		GPU_EXPECT="$OUT/test-gpu/native" bash ci/vm-test.sh ;;
	gpushare) run gpushare 120 env EXECUTOR=cuda bash ci/gpushare-test.sh ;;
	mgmt) run mgmt 180 bash ci/mgmt-gpu.sh ;;
	*) echo "gpu-session: unknown step $s" >&2 ;;
	esac
done
