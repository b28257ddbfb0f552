#!/usr/bin/env bash
# Compute weights (docs/MGMT.md): two servers share one GPU through a
# scheduling file, with weights 100 and 300; a GPU-bound client on each runs
# for the same time. The second must get about three times the GPU time of
# the first; without the scheduling file they get the same.
#
# Without a GPU (default) the servers use the CI stand-in with a simulated
# kernel time (VCUDA_STANDIN_KERNEL_US) on one simulated engine that both
# share in submission order (VCUDA_STANDIN_ENGINE), as two VMs share a GPU.
# With EXECUTOR=cuda on a GPU machine both really share the GPU.
#   EXECUTOR=ci-standin|cuda  SECONDS=4  KERNEL_US=1000  VCUDA_BUILD=build/release
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir gpushare

EXECUTOR=${EXECUTOR:-ci-standin}
SECS=${SECONDS_RUN:-4}
KERNEL_US=${KERNEL_US:-1000}
B=${VCUDA_BUILD:-build/release}
export VCUDA_STANDIN_KERNEL_US=$KERNEL_US
# The clients load the guest libcuda.so.1: LD_LIBRARY_PATH (on a GPU machine
# it may name the real driver) outranks their RUNPATH.
export LD_LIBRARY_PATH="$PWD/$B/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Each server's time with work in flight and its virtual time, from the scheduling file
# (struct vc_sched_file in host-backend/resources/gpushare.h).
sched_report() { # FILE
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
for i in range(64):
    owner, w, act, _, vt, beat, busy, rec = struct.unpack_from("<iIIIQQQQ", d, 64 + 48 * i)
    if w:
        print(f"  server weight {w}: work in flight {busy / 1e6:.0f} ms, virtual time {vt / 1e6:.0f} ms")
EOF
}

run_pair() { # TAG SCHED_FILE|"" -> prints "A B"
	local tag=$1 sched=$2 pids=() args=() rc=0
	export VCUDA_STANDIN_ENGINE=$VC_TMP/$tag.engine
	for w in 100 300; do
		args=(--socket "$VC_TMP/$tag-$w.sock" --executor "$EXECUTOR" --weight "$w")
		[ -n "$sched" ] && args+=(--sched "$sched")
		"$B/bin/vcuda-server" "${args[@]}" >"$VC_TMP/server-$tag-$w.log" 2>&1 &
		pids+=($!)
	done
	for w in 100 300; do
		for _ in $(seq 100); do [ -S "$VC_TMP/$tag-$w.sock" ] && break; sleep 0.05; done
	done
	VCUDA_SOCKET=$VC_TMP/$tag-100.sock "$B/tests/gpushare_load" "$SECS" "$KERNEL_US" >"$VC_TMP/$tag-a.out" &
	local a=$!
	VCUDA_SOCKET=$VC_TMP/$tag-300.sock "$B/tests/gpushare_load" "$SECS" "$KERNEL_US" >"$VC_TMP/$tag-b.out" &
	local b=$!
	wait $a || rc=1
	wait $b || rc=1
	kill -TERM "${pids[@]}"
	wait "${pids[@]}" || true
	[ -z "$sched" ] || sched_report "$sched" >&2
	for w in 100 300; do # a client that reached the GPU some other way measures nothing here
		grep -q 'session [0-9]*: opened' "$VC_TMP/server-$tag-$w.log" || rc=1
	done
	if [ $rc -ne 0 ]; then
		cat "$VC_TMP"/server-"$tag"-*.log >&2
		echo "0 0"
		return
	fi
	echo "$(awk '{print $2}' "$VC_TMP/$tag-a.out") $(awk '{print $2}' "$VC_TMP/$tag-b.out")"
}

read -r a0 b0 < <(run_pair plain "")
read -r a1 b1 < <(run_pair shared "$VC_TMP/gpu0.sched")
if [ "$a0" = 0 ] || [ "$a1" = 0 ]; then
	echo "not ok - a client failed (server logs above)"
	exit 1
fi
r0=$(awk -v a="$a0" -v b="$b0" 'BEGIN { printf "%.2f", b / a }')
r1=$(awk -v a="$a1" -v b="$b1" 'BEGIN { printf "%.2f", b / a }')
echo "without --sched: weight 100 ran $a0 kernels, weight 300 ran $b0 (ratio $r0)"
echo "with --sched:    weight 100 ran $a1 kernels, weight 300 ran $b1 (ratio $r1, weights 1:3)"
rc=0
if awk -v r="$r1" 'BEGIN { exit !(r >= 2.3 && r <= 3.7) }'; then
	echo "ok - competing VMs got GPU time in proportion to their weights ($r1 for 3)"
else
	echo "not ok - ratio $r1 with weights 1:3"
	rc=1
fi
if ! awk -v r="$r0" 'BEGIN { exit !(r >= 0.8 && r <= 1.25) }'; then
	echo "not ok - without the scheduling file the two should get the same share (ratio $r0)"
	rc=1
fi
exit $rc
