#!/usr/bin/env bash
# Every GPU check in one run on the GPU machine, so that one device call
# (its time is scarce) measures them all. Each step has a time limit, writes
# its whole log to $OUT/<step>.log and one summary line to stdout; the run
# goes on past a failing step. Build here first and carry:
#   make -j2 build && ci/vm-test.sh --pack build/vmpack
# then on the GPU machine (the toolkit there builds the GPU suite):
#   OUT=$OUT bash ci/gpu-session.sh [step ...]
# Steps: smoke test-gpu stress bench vm demo gpushare mgmt (default: all, in
# that order), vm-pins (the VM tests of page-locked memory, pinned in place
# and in the pool, and the driver-API suite, through the real driver: a few
# minutes where vm takes most of a call), vm-frameworks (PyTorch inside the VM), profile (where GPT-2's
# fp16 decode spends its time, natively and through vcuda) and suites (CI's
# driver-API and hostile suites through the real driver); the last three not
# by default. Under TCG one PyTorch workload takes about 3 minutes of guest
# time, and the four of vm-frameworks do not fit the device's 10 minutes a
# call (two neither, since decode makes four passes): pick one a call with
# WORKLOADS=mlp-fp32 (ci/vm-frameworks.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/vcuda-gpu-session}
mkdir -p "$OUT"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(smoke test-gpu stress bench vm demo gpushare mgmt)

run() { # NAME LIMIT_S CMD...
	local name=$1 limit=$2 t0=$SECONDS rc
	shift 2
	timeout -k 10 "$limit" "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	printf '%-10s rc=%-3d %4ds  %s\n' "$name" "$rc" $((SECONDS - t0)) \
		"$(grep -E 'passed|PASS|FAIL|ratio|vm-test: pass|ok -|not ok|stress:|vcuda-demo: done' "$OUT/$name.log" | tail -1)"
}

# The stress test (1,000,000 random driver calls, every byte checked) and the
# transport benchmark, as CUDA programs through vcuda-server on the real GPU.
stress_gpu() {
	. ci/lib.sh
	ci_tmpdir stress-gpu
	export VCUDA_SOCKET="$VC_TMP/vcuda.sock"
	build/release/bin/vcuda-server --socket "$VCUDA_SOCKET" --executor cuda >"$VC_TMP/server.log" 2>&1 &
	local pid=$! rc=0
	for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
	LD_LIBRARY_PATH=$PWD/build/release/guest build/release/tests/stress_client --requests 1000000 --threads 2 || rc=1
	LD_LIBRARY_PATH=$PWD/build/release/guest build/release/bench/ring_bench --quick || rc=1
	kill -TERM $pid; wait $pid || rc=1
	grep -E "session|WARNING|error" "$VC_TMP/server.log" | tail -5
	return $rc
}

# The driver-API suites, the hostile suite and the page-locked segments'
# suite that CI runs over the stand-in, here through vcuda-server on the
# real driver: the server's handling of graphs, user objects, stuck
# sessions, misuse and registrations, where the stand-in cannot say what the
# driver does.
suites_gpu() {
	. ci/lib.sh
	ci_tmpdir suites-gpu
	local rc=0 t
	export VCUDA_SOCKET="$VC_TMP/vcuda.sock" VCUDA_ADMIN_SOCKET="$VC_TMP/admin.sock"
	# The suites find the guest library through their RUNPATH, which the
	# GPU machine's LD_LIBRARY_PATH (the NVIDIA driver's folder) overrides:
	# named first here, and checked, or they would run on the real driver
	# natively (the first run of this step did, 2026-11-24).
	export LD_LIBRARY_PATH="$PWD/build/release/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	if ! ldd build/release/tests/test_cuda_api | grep -q "$PWD/build/release/guest/libcuda.so.1"; then
		echo "not ok - the suites would not load the guest libcuda.so.1:"
		ldd build/release/tests/test_cuda_api | grep libcuda
		return 1
	fi
	build/release/bin/vcuda-server --socket "$VCUDA_SOCKET" --admin-socket "$VCUDA_ADMIN_SOCKET" \
		--executor cuda >"$VC_TMP/server.log" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
	for t in test_cuda_api test_cuda_objects test_graphs test_arrays test_managed test_hostile_api; do
		echo "== $t"
		VCUDA_SERVER_PID=$pid timeout 200 build/release/tests/$t || rc=1
	done
	echo "== bad_client"
	build/release/tests/bad_client --socket "$VCUDA_SOCKET" --server-pid $pid --admin "$VCUDA_ADMIN_SOCKET" || rc=1
	kill -TERM $pid; wait $pid || rc=1
	cp "$VC_TMP/server.log" "$OUT/suites-server.log"
	grep -E "stuck|crashed|FATAL" "$VC_TMP/server.log" | tail -5
	# Page-locked segments (several memfds each on a machine of many
	# processors) through the driver's registration: the suite assumes a
	# 64 MiB pool and a 1280 MiB bound, as in CI.
	echo "== test_pinned"
	export VCUDA_SOCKET="$VC_TMP/pinned.sock"
	build/release/bin/vcuda-server --socket "$VCUDA_SOCKET" --executor cuda --pinned-size 64M \
		--pinned-max 1280M >"$VC_TMP/server-pinned.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
	timeout 200 build/release/tests/test_pinned || rc=1
	kill -TERM $pid; wait $pid || rc=1
	return $rc
}

# GPT-2 fp16 greedy decode (16 tokens) natively with the sampling profiler
# preloaded, then through vcuda with it and VCUDA_STATS: the two profiles
# side by side (guest-lib/libcuda/profile.c).
profile_gpt2() {
	. ci/lib.sh
	ci_tmpdir profile-gpu
	local py=/opt/torch/.venv/bin/python3 g=$PWD/build/release/guest rc=0
	export VCUDA_SOCKET="$VC_TMP/vcuda.sock" PYTHONPATH=$PWD/tests/workloads VCUDA_PROFILE=wall
	build/release/bin/vcuda-server --socket "$VCUDA_SOCKET" --executor cuda >"$VC_TMP/server.log" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
	echo "== native"
	LD_PRELOAD=$g/libvcuda-profile.so "$py" tests/workloads/torch_infer.py gpt2 fp16 16 2>&1 | grep -v '^\[transformers' || rc=1
	echo "== vcuda"
	VCUDA_STATS=1 LD_LIBRARY_PATH=$g "$py" tests/workloads/torch_infer.py gpt2 fp16 16 2>&1 | grep -v '^\[transformers' || rc=1
	kill -TERM $pid; wait $pid
	return $rc
}

for s in "${steps[@]}"; do
	case $s in
	smoke) run smoke 60 sh -c 'nvidia-smi -L && nvidia-smi --query-gpu=driver_version,memory.used --format=csv' ;;
	test-gpu) run test-gpu 420 env OUT="$OUT/test-gpu" bash ci/test-gpu.sh ;;
	stress) run stress 240 bash -c "$(declare -f stress_gpu); stress_gpu" ;;
	bench) run bench 240 bash ci/bench-gpu.sh ;;
	vm) run vm 500 env EXECUTOR=cuda VM_PREBUILT=build/vmpack VM_SHM=8G GPU_SUITE=build/gpu-tests \
		GPU_EXPECT="$OUT/test-gpu/native" bash ci/vm-test.sh ;;
	vm-pins) run vm-pins 240 env EXECUTOR=cuda VM_PREBUILT=build/vmpack \
		VM_ONLY=pinned-in-place,pinned-pool,cuda-driver-api bash ci/vm-test.sh ;;
	demo) run demo 400 env VM_PREBUILT=build/vmpack bash ci/demo.sh ;;
	profile) run profile 300 bash -c "$(declare -f profile_gpt2); profile_gpt2" ;;
	suites) run suites 500 bash -c "$(declare -f suites_gpu); suites_gpu" ;;
	vm-frameworks) run vm-frameworks 580 env OUT="$OUT/vm-frameworks" bash ci/vm-frameworks.sh ;;
	gpushare) run gpushare 300 bash -c 'for k in 1000 10; do echo "== kernels of $k us";
		EXECUTOR=cuda KERNEL_US=$k bash ci/gpushare-test.sh || r=1; done; exit ${r:-0}' ;;
	mgmt) run mgmt 180 bash ci/mgmt-gpu.sh ;;
	*) echo "gpu-session: unknown step $s" >&2 ;;
	esac
done
