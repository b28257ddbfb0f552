#!/usr/bin/env bash
# Every CPU test: unit (Check), sanitizers (ASan+UBSan, TSan), integration
# (two processes through vcuda-server with the CI stand-in), fuzz smoke.
# Prints one line per step and a closing "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
STRESS_REQUESTS=${STRESS_REQUESTS:-1000000}
JOBS=${JOBS:-$(nproc)}
. ci/lib.sh
ci_tmpdir check

pass=0
fail=0
failed=()
step() {
	local name=$1
	shift
	local t0=$SECONDS log="$VC_TMP/step.log"
	if "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		printf 'PASS  %-58s %4ds\n' "$name" $((SECONDS - t0))
		grep -E '^(stress:|ok -|#### |Done |PASS |[0-9]+%: Checks|VMTEST (PASS|FAIL|DONE)|vm-test:|with --sched|[0-9]+ passed)' "$log" | sed 's/^/      /' | head -20
	else
		fail=$((fail + 1))
		failed+=("$name")
		printf 'FAIL  %-58s %4ds\n' "$name" $((SECONDS - t0))
		tail -40 "$log" | sed 's/^/      /'
	fi
}

unit() { # VARIANT
	local rc=0
	for t in test_ring test_decode test_handles test_image test_fill test_fatbin test_crew test_place test_guestmem test_optimes test_threads test_exptab test_fdbroker test_mgmt_place test_mgmt_proto test_mgmt_db; do
		echo "== $t"
		"build/$1/tests/$t" || rc=1
	done
	return $rc
}

integration() { # VARIANT
	local v=$1 rc=0
	export VCUDA_VM_SOCKET="$VC_TMP/vm.sock"
	start_server "build/$v/bin/vcuda-server" --vm-socket "$VCUDA_VM_SOCKET" --admin-socket "$VC_TMP/admin.sock" || return 1
	"build/$v/tests/stress_client" --requests "$STRESS_REQUESTS" --threads 2 || rc=1
	echo "== the VM link, with this test in QEMU's place"
	"build/$v/tests/test_vm_link" || rc=1
	"build/$v/tests/bad_client" --socket "$VCUDA_SOCKET" --server-pid "$SERVER_PID" --admin "$VC_TMP/admin.sock" \
		--rss-slack "$([ "$v" = asan ] && echo 65536 || echo 4096)" || rc=1
	"build/$v/demo/vcuda-demo" >/dev/null || rc=1
	if [ "$v" = asan ]; then
		echo "== driver API suites (device printf, pools, graphs): guest library and server under ASan+UBSan"
		"build/$v/tests/test_cuda_api" || rc=1
		"build/$v/tests/test_cuda_objects" || rc=1
		"build/$v/tests/test_arrays" || rc=1
		"build/$v/tests/test_graphs" || rc=1
	fi
	stop_server || rc=1
	echo "== a full server says why (--max-sessions 1)"
	start_server "build/$v/bin/vcuda-server" --max-sessions 1 || return 1
	"build/$v/tests/bad_client" --full --socket "$VCUDA_SOCKET" --server-pid "$SERVER_PID" || rc=1
	stop_server || rc=1
	if [ "$v" = asan ]; then
		echo "== page-locked segments, parked and taken again: guest library and server under ASan+UBSan"
		start_server "build/$v/bin/vcuda-server" --pinned-size 64M --pinned-max 1280M || return 1
		"build/$v/tests/test_pinned" || rc=1
		stop_server || rc=1
	fi
	return $rc
}

cuda_standin() { # the guest libcuda.so.1 and NVIDIA's libcudart over the CI stand-in
	local rc=0 g=build/release/guest
	export VCUDA_ADMIN_SOCKET="$VC_TMP/admin.sock"
	start_server build/release/bin/vcuda-server --admin-socket "$VCUDA_ADMIN_SOCKET" || return 1
	echo "== driver API suite"
	build/release/tests/test_cuda_api || rc=1
	echo "== memory pools, kernel lists and names, capture queries"
	build/release/tests/test_cuda_objects || rc=1
	echo "== managed memory"
	build/release/tests/test_managed || rc=1
	echo "== arrays, textures, surfaces, array and 3D copies"
	build/release/tests/test_arrays || rc=1
	echo "== graphs: every node kind, updates, clones, dot print, user objects"
	build/release/tests/test_graphs || rc=1
	echo "== a buggy program's misuse of the driver API (hostile suite, API level)"
	VCUDA_SERVER_PID=$SERVER_PID build/release/tests/test_hostile_api || rc=1
	echo "== quotas, idle reclaim, admin socket"
	build/release/tests/test_quota || rc=1
	echo "== the guest NVML (libnvidia-ml.so.1): devices, memory within the quota, processes"
	build/release/tests/test_nvml || rc=1
	for v in static shared; do
		echo "== NVIDIA cudart ($v) over the guest library"
		LD_LIBRARY_PATH=$PWD/$g build/release/tests/cudart_smoke_$v || rc=1
	done
	echo "== VCUDA_STATS: the counters at exit, the runtime's export-table slot among them"
	if LD_LIBRARY_PATH=$PWD/$g VCUDA_STATS=1 build/release/tests/cudart_smoke_shared >/dev/null 2>"$VC_TMP/stats.txt" &&
		grep -q '^  total ' "$VC_TMP/stats.txt" && grep -q 'vcExportSlot 6bd5fb6c slot 2 ' "$VC_TMP/stats.txt"; then
		echo "ok - $(grep -c '^  ' "$VC_TMP/stats.txt") lines of statistics"
	else
		echo "not ok - VCUDA_STATS printed:"
		sed 's/^/    /' "$VC_TMP/stats.txt"
		rc=1
	fi
	echo "== cuBLAS, cuFFT and cuRAND over the guest library (every call succeeds)"
	LD_LIBRARY_PATH=$PWD/$g build/release/tests/libs_smoke | tail -n 1
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
	echo "== NVIDIA's NVRTC over the guest library: the driver's compile cache, kept in the guest"
	mkdir -p "$VC_TMP/nvrtc-cache"
	LD_LIBRARY_PATH=$PWD/$g build/release/tests/nvrtc_cache "$VC_TMP/nvrtc-cache" || rc=1
	stop_server || rc=1
	echo "== two stand-in devices: the driver API and NVML suites, each device's identity and memory (second_device)"
	VCUDA_STANDIN_DEVICES=2 start_server build/release/bin/vcuda-server --admin-socket "$VCUDA_ADMIN_SOCKET" || return 1
	build/release/tests/test_cuda_api || rc=1
	CK_RUN_CASE=objects build/release/tests/test_cuda_objects || rc=1
	build/release/tests/test_nvml || rc=1
	stop_server || rc=1
	echo "== vcuda-server --op-times: a session's time per operation, in the log when it closes"
	start_server build/release/bin/vcuda-server --op-times || return 1
	LD_LIBRARY_PATH=$PWD/$g build/release/tests/cudart_smoke_shared >/dev/null || rc=1
	for _ in $(seq 100); do # the worker logs once it has seen the client go
		grep -q 'kinds took' "$VC_TMP/server.log" && break
		sleep 0.05
	done
	stop_server || rc=1
	if grep -q 'operations of [0-9]* kinds took' "$VC_TMP/server.log" && grep -q ' calls .* us each ' "$VC_TMP/server.log"; then
		echo "ok - $(grep -c ' us each ' "$VC_TMP/server.log") operations timed"
	else
		echo "not ok - the server's log has no table of operation times:"
		tail -20 "$VC_TMP/server.log" | sed 's/^/    /'
		rc=1
	fi
	echo "== page-locked memory beyond the pool: segments (a 64M pool, --pinned-max 1280M)"
	start_server build/release/bin/vcuda-server --pinned-size 64M --pinned-max 1280M || return 1
	build/release/tests/test_pinned || rc=1
	stop_server || rc=1
	return $rc
}

# The GPU suite's own programs (make test-gpu), built with nvcc both ways,
# through the guest library and vcuda-server with the CI stand-in: each must
# get through every CUDA call it makes; only kernel results go unchecked
# (tests/gpu/run-suite.sh --mode standin). The stand-in's known gaps are
# listed with their reasons in tests/gpu/standin-gaps.txt.
gpu_suite_standin() {
	local rc=0
	make -C tests/gpu -j"$JOBS" OUT="$PWD/build/gpu-tests" >"$VC_TMP/gpu-build.log" 2>&1 ||
		{ tail -20 "$VC_TMP/gpu-build.log"; return 1; }
	start_server build/release/bin/vcuda-server || return 1
	bash tests/gpu/run-suite.sh --bin build/gpu-tests --mode standin --guest-lib build/release/guest \
		--socket "$VCUDA_SOCKET" --out "$VC_TMP/gpu-suite" --timeout 60 --skip tests/gpu/standin-gaps.txt || rc=1
	stop_server || rc=1
	# Two stand-in devices: multi_device_ptrs checks no kernel's result, so
	# it must pass outright (each kind of memory on the device it was made
	# on); multi_device_p2p must get through every call between the two.
	VCUDA_STANDIN_DEVICES=2 start_server build/release/bin/vcuda-server || return 1
	local v p last
	for v in static shared; do
		for p in multi_device_ptrs multi_device_p2p; do
			last=$(LD_LIBRARY_PATH="$PWD/build/release/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
				timeout 60 "build/gpu-tests/$v/$p" 2>&1 | tail -1)
			case "$p:$last" in
			"$p:PASS $p")
				echo "PASS $v/$p (two stand-in devices)" ;;
			"multi_device_p2p:FAIL multi_device_p2p: "*" check(s) failed, first: "*)
				echo "RAN  $v/$p (two stand-in devices): every CUDA call made; kernel results not checked" ;;
			*)
				echo "FAIL $v/$p (two stand-in devices): $last"
				rc=1 ;;
			esac
		done
	done
	stop_server || rc=1
	return $rc
}

integration_asan() {
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 integration asan
}

# The VM's payload disk (how the GPU suite reaches the guest on the GPU
# machine), here with NVIDIA's cudart programs and cuBLAS, cuFFT and cuRAND
# over the stand-in: the guest's results must match the host's byte for byte.
vm_disk() {
	local d=$VC_TMP/gs v
	mkdir -p "$d"/suite/{static,shared} "$d"/native/{static,shared}
	start_server build/release/bin/vcuda-server || return 1
	for v in static shared; do
		cp "build/release/tests/cudart_smoke_$v" "$d/suite/$v/cudart_smoke"
	done
	cp build/release/tests/libs_smoke "$d/suite/shared/libs_smoke"
	for p in "$d"/suite/*/*; do
		v=$(basename "$(dirname "$p")")
		LD_LIBRARY_PATH=$PWD/build/release/guest "$p" >"$d/native/$v/${p##*/}.out"
		echo $? >"$d/native/$v/${p##*/}.rc"
	done
	stop_server || return 1
	GPU_SUITE=$d/suite GPU_EXPECT=$d/native \
		VM_ONLY=gpu-static-cudart_smoke,gpu-shared-cudart_smoke,gpu-shared-libs_smoke bash ci/vm-test.sh
}

dead_server() { # a client must notice a killed server with an error, not hang
	local rc=0 t0
	start_server build/release/bin/vcuda-server || return 1
	build/release/tests/stress_client --requests 1000000000 >"$VC_TMP/dead.log" 2>&1 &
	local cpid=$!
	sleep 0.5
	kill -KILL "$SERVER_PID"
	wait "$SERVER_PID" 2>/dev/null
	t0=$SECONDS
	if wait "$cpid"; then
		echo "client did not notice the dead server"
		rc=1
	fi
	sed 's/^/client: /' "$VC_TMP/dead.log"
	grep -q "lost vcuda-server" "$VC_TMP/dead.log" || { echo "no clear error"; rc=1; }
	[ $((SECONDS - t0)) -le 5 ] || { echo "took $((SECONDS - t0)) s"; rc=1; }
	[ $rc -eq 0 ] && echo "ok - server killed with SIGKILL: the client stopped within $((SECONDS - t0)) s with \"lost vcuda-server\""
	return $rc
}

qemu_build() { # builds (or finds cached) QEMU, then runs the device's qtest again
	local q
	q=$(bash ci/qemu.sh) || return 1
	echo "qemu in $q"
	QTEST_QEMU_BINARY="$q/bin/qemu-system-x86_64" "$q/bin/virtio-vcuda-test"
}

fuzz() { # TARGET SECONDS
	local corpus="$VC_TMP/corpus-$1"
	mkdir -p "$corpus"
	cp "tests/fuzz/corpus/${1#fuzz_}/"* "$corpus/"
	local regress="tests/fuzz/regressions"
	# Inputs that once crashed or hung a decoder must stay harmless.
	if ls "$regress/${1#fuzz_}"-* >/dev/null 2>&1; then
		"build/fuzz/fuzz/$1" -runs=0 -timeout=10 "$regress/${1#fuzz_}"-* || return 1
	fi
	# A crash's input is kept under build/fuzz/artifacts (the temp dir goes at
	# exit) and its stack printed where the step's tail shows it.
	mkdir -p build/fuzz/artifacts
	"build/fuzz/fuzz/$1" -max_total_time="$2" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="build/fuzz/artifacts/$1-" -print_final_stats=1 "$corpus" >"$VC_TMP/fuzz.log" 2>&1
	local rc=$?
	# the report from its first line to its stack's end, then where the input went
	awk '/ERROR: |runtime error/ { p = 1 } /Shadow bytes around/ { p = 0 } p;
	     /Test unit written|^Done [0-9]+ runs/' "$VC_TMP/fuzz.log" | head -40
	return $rc
}

# QEMU's generic fuzzer on virtio-vcuda-pci (qemu-patches/0008) for SECONDS,
# when QEMU's fuzzing build is cached already: tools/fuzz-long.sh builds it
# (ci/qemu.sh --fuzz, about 10 minutes on two cores), which CI does not.
qemu_fuzz() { # SECONDS
	local q
	if ! q=$(VCUDA_QEMU_NO_BUILD=1 bash ci/qemu.sh --fuzz 2>/dev/null | tail -n 1) || [ -z "$q" ]; then
		echo "ok - QEMU's fuzzing build is not cached (tools/fuzz-long.sh builds it): not run"
		return 0
	fi
	mkdir -p build/fuzz/artifacts "$VC_TMP/corpus-qemu"
	"$q/bin/qemu-fuzz-x86_64" --fuzz-target=generic-fuzz-virtio-vcuda-pci -max_total_time="$1" -timeout=20 \
		-rss_limit_mb=4096 -artifact_prefix=build/fuzz/artifacts/qemu_virtio_vcuda- -print_final_stats=1 \
		"$VC_TMP/corpus-qemu" >"$VC_TMP/fuzz.log" 2>&1
	local rc=$?
	awk '/ERROR: |runtime error/ { p = 1 } /Shadow bytes around/ { p = 0 } p;
	     /Test unit written|^Done [0-9]+ runs/' "$VC_TMP/fuzz.log" | head -40
	return $rc
}

echo "vcuda check: $(date -u +%FT%TZ), $(nproc) cores"
step "build release (-Werror)" make -j"$JOBS" VARIANT=release
step "hand-kept copies of the VM link ABI match shared/ (QEMU patch, kmod)" python3 tools/check_copies.py
step "driver coverage: every exported symbol has a disposition, <= 25 refused, docs/driver-coverage.md current" \
	python3 tools/gen/gen_coverage.py --check
step "unit tests (Check)" unit release
step "make bench's PyTorch rounds (tests/workloads/run.py --repeat) with a stand-in interpreter" \
	python3 tests/workloads/test_run.py
step "host-backend layers: no call or include cycles, folder rules, files under 800 lines" python3 tools/check_layers.py build/release
step "build ASan+UBSan" make -j"$JOBS" VARIANT=asan
step "unit tests under ASan+UBSan" unit asan
step "build TSan" make -j"$JOBS" VARIANT=tsan
step "two-thread ring test under TSan" env TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_threads
step "bulk-copy helpers under TSan" env TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_crew
step "integration: $STRESS_REQUESTS requests, VM link, hostile clients, demo" integration release
step "integration under ASan+UBSan" integration_asan
step "make bench runs: ring, arena and the in-process pipeline, data checked (figures not judged here)" bash ci/bench.sh --quick
step "compute weights: servers weighted 1:3 share a simulated GPU" env SECONDS_RUN=3 bash ci/gpushare-test.sh
step "host manager end to end: inventory, CI stand-in, QEMU stand-in" bash ci/mgmt-test.sh release
step "host manager end to end under ASan+UBSan" bash ci/mgmt-test.sh asan
step "build NVIDIA-runtime test programs (nvcc)" make VARIANT=release cudart-smoke
step "build the GPU machine's measuring tools (make bench's CUDA programs, the driver-API splits)" make VARIANT=release bench-tools
step "CUDA through vcuda, CI stand-in: driver API, quotas, cudart static+shared" cuda_standin
step "GPU suite (every program, static and shared cudart) through vcuda, CI stand-in: every CUDA call, kernel results unchecked" gpu_suite_standin
step "client detects a killed server" dead_server
step "QEMU 10.0.2 + virtio-vcuda-pci (cached build) and its qtest" qemu_build
step "VM: TCG guest, vcuda.ko, device, CI stand-in behind the server" bash ci/vm-test.sh
step "VM: payload disk (cudart, cuBLAS, cuFFT, cuRAND), results equal to the host's" vm_disk
step "build fuzzers (libFuzzer)" make -j"$JOBS" VARIANT=fuzz
step "fuzz the ring decoder for ${FUZZ_SECONDS}s" fuzz fuzz_decode "$FUZZ_SECONDS"
step "fuzz the handshake decoder for 10s" fuzz fuzz_handshake 10
step "fuzz the VM link frame reader for 10s" fuzz fuzz_vm_frame 10
step "fuzz the guest-pin reader for 10s" fuzz fuzz_guestmem 10
step "fuzz the management request decoder for 10s" fuzz fuzz_mgmt_request 10
step "fuzz the QEMU device (generic-fuzz) for 30s, if its fuzzing build is cached" qemu_fuzz 30
step "Debian packages: build, install, units verified, DKMS, libvirt XML, manager end to end installed" \
	bash ci/packages-test.sh

echo
if [ $fail -ne 0 ]; then
	echo "failed: ${failed[*]}"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
