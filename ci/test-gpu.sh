#!/usr/bin/env bash
# make test-gpu: the GPU suite (tests/gpu), on a machine with an NVIDIA GPU.
# Every program, built with static and with shared cudart, runs natively and
# through vcuda-server (real driver); a program passes only if it passes
# natively and prints byte for byte the same through vcuda.
#
# Environment: GPU_TESTS (built programs; default build/gpu-tests, built if
# missing), VCUDA_BUILD (vcuda-server and the guest libcuda.so.1; default
# build/release, built if missing), OUT (results; default a temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir test-gpu

bin=${GPU_TESTS:-build/gpu-tests}
vb=${VCUDA_BUILD:-build/release}
out=${OUT:-$VC_TMP/results}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "test-gpu: no NVIDIA GPU here; this suite runs on the GPU machine" >&2
	exit 2
fi
[ -x "$vb/bin/vcuda-server" ] && [ -f "$vb/guest/libcuda.so.1" ] ||
	make -j"$(nproc)" VARIANT=release "$vb/bin/vcuda-server" "$vb/guest/libcuda.so.1"
[ -d "$bin/static" ] || make -C tests/gpu -j"$(nproc)" OUT="$PWD/$bin"

export VCUDA_SOCKET="$VC_TMP/vcuda.sock"
"$vb/bin/vcuda-server" --socket "$VCUDA_SOCKET" --executor cuda >"$VC_TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
rc=0
mkdir -p "$out"
# The driver-API Check suites of make check, here against the real driver.
for t in test_cuda_api test_cuda_objects test_arrays; do
	if [ -x "$vb/tests/$t" ]; then
		echo "== $t (real driver)"
		# The guest library first: LD_LIBRARY_PATH (which may name the
		# machine's driver) outranks the binaries' RUNPATH.
		if LD_LIBRARY_PATH="$PWD/$vb/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
			"$vb/tests/$t" >"$out/$t.log" 2>&1; then tail -3 "$out/$t.log"; else
			tail -30 "$out/$t.log"
			rc=1
		fi
	fi
done
bash tests/gpu/run-suite.sh --bin "$bin" --mode both --guest-lib "$PWD/$vb/guest" \
	--socket "$VCUDA_SOCKET" --out "$out" || rc=1
kill -TERM "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" || true
mkdir -p "$out" && cp "$VC_TMP/server.log" "$out/server.log"
exit $rc
