#!/usr/bin/env bash
# tests/soak/run.sh: the soak. One vcuda-server on the real driver (or the
# CI stand-in), PROCS guest processes on the host looping over a mix of the
# GPU suite's programs (build/gpu-tests/{static,shared}/*) and framework
# workloads (tests/workloads/*.py, when the frameworks' Python is there) for
# DURATION seconds, and VM_PROCS processes inside a VM attached to the same
# server (ci/vm-test.sh VM_SOAK). Then every session must be freed, and the
# GPU's memory, the server's resident memory and its descriptors must be
# back at their baseline. Prints a summary table; exits 1 on any failure.
#
#   tests/soak/run.sh [--duration S] [--procs N] [--vm-procs N] [--no-vm]
#                     [--executor cuda|ci-standin] [--gpu-tests DIR]
#                     [--vcuda-build DIR] [--python PY] [--out DIR]
#
#   --duration S     seconds of load (default 600)
#   --procs N        host guest processes (default 8)
#   --vm-procs N     processes inside the VM (default 4; 0 or --no-vm: none)
#   --executor       cuda (default: the GPU machine) or ci-standin (CI's
#                    stand-in: kernel results are not checked there)
#   --gpu-tests DIR  the built GPU suite (default build/gpu-tests; built
#                    with make -C tests/gpu when missing)
#   --vcuda-build D  vcuda-server and the guest library (default build/release)
#   --python PY      the frameworks' Python (default /opt/torch/.venv/bin/python3;
#                    the workloads are left out when it is missing)
#   --out DIR        logs (default a temp dir, kept)
#
# The VM part boots the guest of ci/vm-test.sh (VM_PREBUILT=build/vmpack on
# the GPU machine, as ci/gpu-session.sh does; VM_ACCEL=kvm where /dev/kvm
# is usable) with the GPU suite on its payload disk.
#
# A run passes when the program exits 0 and, for the GPU suite, prints
# "PASS NAME" last (over the stand-in, "FAIL NAME: N check(s) failed" counts
# as a run: its kernels do not compute); a workload passes when it exits 0
# and its result agrees with the workload's native run, taken once before
# the load (tests/workloads/run.py --check). Baselines are taken after one warm-up
# session (the server's first fork and the driver's first load); the GPU's
# memory must come back within 64 MiB, the listener's RSS within 8 MiB, its
# descriptors exactly.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD

DURATION=600
PROCS=8
VM_PROCS=4
EXECUTOR=cuda
GPU_TESTS=build/gpu-tests
VB=build/release
PY=/opt/torch/.venv/bin/python3
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--duration) DURATION=${2:?}; shift ;;
	--procs) PROCS=${2:?}; shift ;;
	--vm-procs) VM_PROCS=${2:?}; shift ;;
	--no-vm) VM_PROCS=0 ;;
	--executor) EXECUTOR=${2:?}; shift ;;
	--gpu-tests) GPU_TESTS=${2:?}; shift ;;
	--vcuda-build) VB=${2:?}; shift ;;
	--python) PY=${2:?}; shift ;;
	--out) OUT=${2:?}; shift ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "soak: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
OUT=${OUT:-$(mktemp -d /tmp/vcuda-soak.XXXXXX)}
mkdir -p "$OUT/runs"
OUT=$(cd "$OUT" && pwd)
say() { echo "soak: $*" >&2; }

# ---- builds ----------------------------------------------------------------------
[ -x "$VB/bin/vcuda-server" ] && [ -f "$VB/guest/libcuda.so.1" ] ||
	make -s -j"$(nproc)" VARIANT=release >"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 2; }
[ -d "$GPU_TESTS/static" ] || make -s -C tests/gpu -j"$(nproc)" OUT="$ROOT/$GPU_TESTS" >>"$OUT/build.log" 2>&1 ||
	{ tail -20 "$OUT/build.log"; exit 2; }
GPU_TESTS=$(cd "$GPU_TESTS" && pwd)
GUEST_LIB=$ROOT/$VB/guest

# ---- what the processes run ------------------------------------------------------
# The stand-in's known gaps (tests/gpu/standin-gaps.txt) are left out there.
declare -A gap=()
if [ "$EXECUTOR" = ci-standin ]; then
	while read -r n _; do
		case $n in '' | '#'*) ;; *) gap[$n]=1 ;; esac
	done <tests/gpu/standin-gaps.txt
fi
progs=()
for v in static shared; do
	for p in "$GPU_TESTS/$v"/*; do
		[ -f "$p" ] && [ -x "$p" ] && [ -z "${gap[${p##*/}]+x}" ] && progs+=("gpu:$p")
	done
done
workloads=()
if [ -x "$PY" ] && [ "$EXECUTOR" = cuda ]; then
	workloads=("mlp-fp32:torch_train.py mlp fp32" "cnn-fp16:torch_train.py cnn fp16"
		"gpt2-fp16:torch_infer.py gpt2 fp16" "cuda-graph:torch_graph.py"
		"triton-softmax:triton_kernel.py" "cudnn-conv:torch_cudnn.py" "cupy-libs:cupy_libs.py"
		"jax-jit:jax_net.py")
	for w in "${workloads[@]}"; do progs+=("wl:$w"); done
fi
[ ${#progs[@]} -gt 0 ] || { echo "soak: nothing to run in $GPU_TESTS" >&2; exit 2; }

# ---- the server ------------------------------------------------------------------
SOCK=$OUT/vcuda.sock
VMSOCK=$OUT/vm.sock
ADMIN=$OUT/admin.sock
"$VB/bin/vcuda-server" --socket "$SOCK" --vm-socket "$VMSOCK" --admin-socket "$ADMIN" \
	--executor "$EXECUTOR" --max-sessions 64 >"$OUT/server.log" 2>&1 &
SERVER_PID=$!
cleanup() {
	kill $(jobs -p) 2>/dev/null
	kill -TERM "$SERVER_PID" 2>/dev/null
}
trap cleanup EXIT
for _ in $(seq 200); do [ -S "$SOCK" ] && [ -S "$ADMIN" ] && break; sleep 0.05; done
[ -S "$SOCK" ] || { cat "$OUT/server.log"; exit 2; }

# admin QUERY: one JSON request on the admin socket, the reply's field QUERY
admin() {
	python3 - "$ADMIN" "$1" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b'{"op":"status"}\n')
buf = b""
while not buf.endswith(b"\n"):
    d = s.recv(65536)
    if not d:
        break
    buf += d
r = json.loads(buf)
q = sys.argv[2]
print(len(r["sessions"]) if q == "sessions" else r[q])
EOF
}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status"; }
fds() { ls "/proc/$SERVER_PID/fd" | wc -l; }
gpu_mem() {
	if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
		nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1
	else
		echo n/a
	fi
}
# wait_idle S: until the server holds no session (at most S seconds)
wait_idle() {
	local i n
	for ((i = 0; i < $1 * 10; i++)); do
		n=$(admin sessions 2>/dev/null || echo x)
		[ "$n" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}

# one_run K LABEL: run program K of the mix once; logs under runs/
one_run() {
	local spec=${progs[$1]} log rc last name
	log=$OUT/runs/$2.log
	case $spec in
	gpu:*)
		local p=${spec#gpu:}
		name=${p##*/}
		(cd "$OUT/runs" && env LD_LIBRARY_PATH="$GUEST_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
			VCUDA_SOCKET="$SOCK" timeout -k 5 300 "$p" </dev/null >"$log" 2>&1)
		rc=$?
		last=$(grep -E "^(PASS|FAIL) $name" "$log" | tail -n 1)
		[ $rc -eq 0 ] && [ "$last" = "PASS $name" ] && return 0
		[ "$EXECUTOR" = ci-standin ] && [ $rc -eq 1 ] &&
			case $last in "FAIL $name: "*" check(s) failed"*) return 0 ;; esac
		echo "$(basename "$(dirname "$p")")/$name exit $rc: ${last:-$(tail -n 1 "$log")}"
		return 1
		;;
	wl:*)
		local w=${spec#wl:}
		name=${w%%:*}
		# shellcheck disable=SC2086
		(cd "$ROOT/tests/workloads" && env LD_LIBRARY_PATH="$GUEST_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
			VCUDA_SOCKET="$SOCK" timeout -k 5 600 "$PY" ${w#*:} </dev/null >"$log" 2>&1)
		rc=$?
		local why=
		[ $rc -eq 0 ] && why=$("$PY" "$ROOT/tests/workloads/run.py" --check "$name" "$OUT/native-$name.log" "$log") &&
			return 0
		echo "workload $name exit $rc: ${why:-$(tail -n 1 "$log")}"
		return 1
		;;
	esac
}

# loop N END: process N's loop until END (epoch seconds)
loop() {
	local n=$1 end=$2 k=$1 runs=0 bad=0
	while [ "$(date +%s)" -lt "$end" ]; do
		if ! one_run $((k % ${#progs[@]})) "p$n-$runs" >>"$OUT/fail-$n.txt"; then
			bad=$((bad + 1))
		else
			rm -f "$OUT/runs/p$n-$runs.log"
		fi
		runs=$((runs + 1))
		k=$((k + PROCS + 1))
	done
	echo "$runs $bad" >"$OUT/count-$n.txt"
}

# ---- baseline (after a warm-up session), load, and the checks ---------------------
say "server pid $SERVER_PID, executor $EXECUTOR, ${#progs[@]} programs in the mix, out $OUT"
# Each workload once natively: the result its runs through vcuda must agree
# with (tests/workloads/run.py --check: exactly, or to the workload's
# stated tolerance).
for w in "${workloads[@]}"; do
	name=${w%%:*}
	# shellcheck disable=SC2086
	(cd "$ROOT/tests/workloads" && timeout -k 5 600 "$PY" ${w#*:} </dev/null >"$OUT/native-$name.log" 2>&1) ||
		say "workload $name fails natively: its runs through vcuda will fail too"
done
one_run 0 warmup >/dev/null || say "the warm-up run failed (it is counted nowhere)"
wait_idle 30 || say "sessions still open after the warm-up"
sleep 1
base_gpu=$(gpu_mem) base_rss=$(rss) base_fds=$(fds)
say "baseline: GPU memory $base_gpu MiB, server RSS $base_rss KiB, $base_fds fds"

end=$(($(date +%s) + DURATION))
t0=$SECONDS
for ((n = 0; n < PROCS; n++)); do
	: >"$OUT/fail-$n.txt"
	loop "$n" "$end" &
done
vm_rc=skip
if [ "$VM_PROCS" -gt 0 ]; then
	say "VM: $VM_PROCS processes for $DURATION s"
	mkdir -p "$OUT/empty-expect" # run-suite verdicts, not native outputs, judge the soak
	(env EXECUTOR="$EXECUTOR" VM_SERVER_SOCKET="$VMSOCK" VM_ONLY=soak VM_SOAK="$DURATION" \
		VM_SOAK_PROCS="$VM_PROCS" VM_TIMEOUT=$((DURATION + 900)) VCUDA_BUILD="$VB" \
		${GPU_DISK:+GPU_DISK=$GPU_DISK} \
		$([ "$EXECUTOR" = cuda ] && echo "GPU_SUITE=$GPU_TESTS GPU_EXPECT=$OUT/empty-expect VM_SHM=${VM_SHM:-16G} VM_SLOTS=${VM_SLOTS:-8}") \
		bash ci/vm-test.sh >"$OUT/vm.log" 2>&1; echo $? >"$OUT/vm.rc") &
fi
# samples while loaded
while [ "$(date +%s)" -lt "$end" ]; do
	echo "$(date +%s) sessions=$(admin sessions 2>/dev/null) mem_used=$(admin mem_used 2>/dev/null) rss=$(rss) fds=$(fds) gpu=$(gpu_mem)" >>"$OUT/samples.txt"
	sleep 10
done
wait $(jobs -p | grep -v "^$SERVER_PID$") 2>/dev/null
load_s=$((SECONDS - t0))
[ -f "$OUT/vm.rc" ] && vm_rc=$(cat "$OUT/vm.rc")

# ---- after ----------------------------------------------------------------------------
freed=yes
wait_idle 60 || freed=no
sleep 2
sessions_after=$(admin sessions 2>/dev/null || echo ?)
mem_after=$(admin mem_used 2>/dev/null || echo ?)
pinned_after=$(admin pinned_used 2>/dev/null || echo ?)
for _ in $(seq 50); do [ "$(fds)" -le "$base_fds" ] && break; sleep 0.1; done
gpu_after=$(gpu_mem) rss_after=$(rss) fds_after=$(fds)
alive=yes
kill -0 "$SERVER_PID" 2>/dev/null || alive=no

runs=0 fails=0
for ((n = 0; n < PROCS; n++)); do
	read -r r b <"$OUT/count-$n.txt" 2>/dev/null || { r=0; b=1; }
	runs=$((runs + r))
	fails=$((fails + b))
done
vm_line=$(grep -E '^    soak process:' "$OUT/vm.log" 2>/dev/null | sed 's/^ *//' | paste -sd';' -)
vm_pass=$(grep -c '^VMTEST PASS soak' "$OUT/vm.log" 2>/dev/null || echo 0)

ok=1
verdict() { # NAME GOOD(1/0) DETAIL
	printf '%-30s %-6s %s\n' "$1" "$([ "$2" = 1 ] && echo ok || echo FAIL)" "$3"
	[ "$2" = 1 ] || ok=0
}
echo
echo "soak: $PROCS host processes, $DURATION s ($load_s s with the wind-down), executor $EXECUTOR"
verdict "host runs" "$([ $fails -eq 0 ] && [ $runs -gt 0 ] && echo 1 || echo 0)" "$runs runs, $fails failed$( [ $fails -gt 0 ] && echo ": $(cat "$OUT"/fail-*.txt | head -n 3 | paste -sd';' -)")"
if [ "$VM_PROCS" -gt 0 ]; then
	verdict "VM runs ($VM_PROCS processes)" "$([ "$vm_rc" = 0 ] && [ "$vm_pass" -ge 1 ] && echo 1 || echo 0)" \
		"${vm_line:-no result} (vm-test exit $vm_rc; $OUT/vm.log)"
fi
verdict "server alive" "$([ $alive = yes ] && echo 1 || echo 0)" "pid $SERVER_PID"
verdict "sessions freed" "$([ $freed = yes ] && [ "$sessions_after" = 0 ] && echo 1 || echo 0)" \
	"$sessions_after open, $mem_after device and $pinned_after pinned bytes charged"
verdict "charges back to 0" "$([ "$mem_after" = 0 ] && [ "$pinned_after" = 0 ] && echo 1 || echo 0)" \
	"device $mem_after, pinned $pinned_after"
if [ "$base_gpu" = n/a ]; then
	verdict "GPU memory" 1 "no GPU here (n/a)"
else
	verdict "GPU memory back" "$([ $((gpu_after - base_gpu)) -le 64 ] && echo 1 || echo 0)" "$base_gpu -> $gpu_after MiB"
fi
verdict "server RSS back" "$([ $((rss_after - base_rss)) -le 8192 ] && echo 1 || echo 0)" "$base_rss -> $rss_after KiB"
verdict "server fds back" "$([ "$fds_after" -le "$base_fds" ] && echo 1 || echo 0)" "$base_fds -> $fds_after"
echo "samples under load: $OUT/samples.txt; failures: $OUT/fail-*.txt and their logs in $OUT/runs"
kill -TERM "$SERVER_PID" 2>/dev/null
wait "$SERVER_PID" 2>/dev/null
trap - EXIT
[ $ok = 1 ]
