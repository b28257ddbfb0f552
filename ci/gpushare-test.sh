#!/usr/bin/env bash
# Compute weights (docs/MGMT.md): servers share one GPU through a scheduling
# file, each with a GPU-bound client running for the same time; each must get
# GPU time (kernels completed) in proportion to its weight, within +-10%:
#   plain   weights 100 300 without the file: the same share each (0.8-1.25)
#   1:3     weights 100 300
#   1:1:2   weights 100 100 200
#   idle    weights 100 300 busy beside a server of weight 600 whose session
#           is idle: still 1:3, and the idle one's share goes to the busy
#           ones (their total at least 90% of the 1:3 case's)
#
# Without a GPU (default) the servers use the CI stand-in with a simulated
# kernel time (VCUDA_STANDIN_KERNEL_US) on one simulated engine that all
# share in submission order (VCUDA_STANDIN_ENGINE), as VMs share a GPU.
# With EXECUTOR=cuda on a GPU machine they really share the GPU.
#   EXECUTOR=ci-standin|cuda  SECONDS_RUN=4  KERNEL_US=1000  VCUDA_BUILD=build/release
#   CASES="plain 1:3 1:1:2 idle"
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir gpushare

EXECUTOR=${EXECUTOR:-ci-standin}
SECS=${SECONDS_RUN:-4}
KERNEL_US=${KERNEL_US:-1000}
CASES=${CASES:-plain 1:3 1:1:2 idle}
B=${VCUDA_BUILD:-build/release}
export VCUDA_STANDIN_KERNEL_US=$KERNEL_US
# The clients load the guest libcuda.so.1: LD_LIBRARY_PATH (on a GPU machine
# it may name the real driver) outranks their RUNPATH.
export LD_LIBRARY_PATH="$PWD/$B/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# Each server's time with work in flight and its virtual time, from the scheduling file
# (struct vc_sched_file in host-backend/resources/gpushare.h).
sched_report() { # FILE
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
for i in range(64):
    owner, w, act, _, vt, beat, busy, rec = struct.unpack_from("<iIIIQQQQ", d, 64 + 48 * i)
    if w:
        print(f"  server weight {w}: work in flight {busy / 1e6:.0f} ms, virtual time {vt / 1e6:.0f} ms")
PY
}

# run_set TAG SCHED_FILE|"" W[:idle]... -> prints the kernels each client ran, in order
run_set() {
	local tag=$1 sched=$2 pids=() cpids=() args=() rc=0 i=0 spec
	shift 2
	export VCUDA_STANDIN_ENGINE=$VC_TMP/$tag.engine
	for spec in "$@"; do
		args=(--socket "$VC_TMP/$tag-$i.sock" --executor "$EXECUTOR" --weight "${spec%%:*}")
		[ -n "$sched" ] && args+=(--sched "$sched")
		"$B/bin/vcuda-server" "${args[@]}" >"$VC_TMP/server-$tag-$i.log" 2>&1 &
		pids+=($!)
		i=$((i + 1))
	done
	for ((i = 0; i < $#; i++)); do
		for _ in $(seq 100); do [ -S "$VC_TMP/$tag-$i.sock" ] && break; sleep 0.05; done
	done
	i=0
	# one counting window for all, after every client's start-up (gpushare_load.c)
	GPUSHARE_START=$(($(python3 -c 'import time; print(time.monotonic_ns())') + 1500000000))
	export GPUSHARE_START
	for spec in "$@"; do
		VCUDA_SOCKET=$VC_TMP/$tag-$i.sock "$B/tests/gpushare_load" "$SECS" "$KERNEL_US" \
			$([ "${spec#*:}" = idle ] && echo idle) >"$VC_TMP/$tag-$i.out" &
		cpids+=($!)
		i=$((i + 1))
	done
	for p in "${cpids[@]}"; do wait "$p" || rc=1; done
	kill -TERM "${pids[@]}"
	wait "${pids[@]}" || true
	[ -z "$sched" ] || sched_report "$sched" >&2
	for ((i = 0; i < $#; i++)); do # a client that reached the GPU some other way measures nothing here
		grep -q 'session [0-9]*: opened' "$VC_TMP/server-$tag-$i.log" || rc=1
	done
	if [ $rc -ne 0 ]; then
		cat "$VC_TMP"/server-"$tag"-*.log >&2
		echo 0
		return
	fi
	for ((i = 0; i < $#; i++)); do awk '{printf "%s ", $2}' "$VC_TMP/$tag-$i.out"; done
	echo
}

rc=0
# check NAME "W..." "COUNTS..." LO HI: each busy client's kernels per unit of
# weight, against the first's, within [LO, HI]
check() {
	python3 - "$@" <<'PY'
import sys
name, ws, ns, lo, hi = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), float(sys.argv[4]), float(sys.argv[5])
busy = [(float(w.split(":")[0]), float(n)) for w, n in zip(ws, ns) if not w.endswith(":idle")]
base = busy[0][1] / busy[0][0]
rel = [n / w / base for w, n in busy]
ok = base > 0 and all(lo <= r <= hi for r in rel)
shares = " ".join(f"{n:.0f}" for _, n in busy)
print(f"{'ok' if ok else 'not ok'} - {name}: kernels {shares} for weights "
      f"{' '.join(w for w in ws if not w.endswith(':idle'))}, per weight against the first "
      f"{' '.join(f'{r:.2f}' for r in rel)} (bound {lo}-{hi})")
sys.exit(0 if ok else 1)
PY
}
total13=0
for c in $CASES; do
	case $c in
	plain) ws="100 300"; sched= ;;
	1:3) ws="100 300"; sched=$VC_TMP/gpu-$c.sched ;;
	1:1:2) ws="100 100 200"; sched=$VC_TMP/gpu-$c.sched ;;
	idle) ws="100 300 600:idle"; sched=$VC_TMP/gpu-$c.sched ;;
	*) echo "gpushare-test: unknown case $c" >&2; exit 2 ;;
	esac
	# shellcheck disable=SC2086
	counts=$(run_set "${c//:/}" "$sched" $ws)
	if [ "$counts" = 0 ]; then
		echo "not ok - $c: a client failed (server logs above)"
		rc=1
		continue
	fi
	case $c in
	plain) # no weights: the same share each
		check "$c (no scheduling file, weights not applied)" "100 100" "$counts" 0.8 1.25 || rc=1 ;;
	*)
		check "$c" "$ws" "$counts" 0.9 1.1 || rc=1 ;;
	esac
	busy_total=$(echo "$counts" | awk '{print $1 + $2}')
	[ "$c" = 1:3 ] && total13=$busy_total
	if [ "$c" = idle ] && [ "$total13" -gt 0 ]; then
		if [ "$busy_total" -ge $((total13 * 9 / 10)) ]; then
			echo "ok - idle: the busy servers ran $busy_total kernels beside an idle one ($total13 without it)"
		else
			echo "not ok - idle: the busy servers ran $busy_total kernels beside an idle one, $total13 without it"
			rc=1
		fi
	fi
done
exit $rc
