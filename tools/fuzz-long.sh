#!/usr/bin/env bash
# tools/fuzz-long.sh: the long fuzzing run. Builds every fuzz target, runs
# each for a number of executions, and prints a table of executions and
# crashes per target; exits non-zero on any crash.
#
#   tools/fuzz-long.sh [--total N | --runs N] [--qemu-runs N] [--jobs J]
#                      [--targets a,b,...] [--no-qemu] [--out DIR] [--build-only]
#
#   --total N    executions over all targets, shared out evenly (the issue's
#                long run: --total 100000000)
#   --runs N     executions per target (default 20000: a smoke run)
#   --qemu-runs N  executions of the QEMU target alone (default: as the
#                others; it makes about 100 per second per process where
#                vcuda's make tens of thousands, so a long run gives it
#                fewer: --total then shares the rest among vcuda's)
#   --jobs J     fuzzer processes per target, run side by side, sharing the
#                target's corpus (default: the number of cores)
#   --targets    a subset of: fuzz_decode fuzz_handshake fuzz_vm_frame
#                fuzz_mgmt_request qemu_virtio_vcuda
#   --no-qemu    leave out the QEMU device's target (no QEMU fuzz build)
#   --out DIR    corpora, logs and crash inputs (default
#                $VCUDA_CACHE/fuzz-long/<UTC time>); a corpus there grows
#                from the committed seeds (tests/fuzz/corpus) and is kept
#   --build-only build the targets and stop
#
# Targets:
#   fuzz_decode, fuzz_handshake, fuzz_vm_frame, fuzz_mgmt_request: vcuda's
#     own (tests/fuzz, `make VARIANT=fuzz`: clang, libFuzzer, ASan+UBSan),
#     built incrementally in the clone's build/fuzz;
#   qemu_virtio_vcuda: QEMU's generic-fuzz target for virtio-vcuda-pci
#     (qemu-patches/0008), in QEMU's fuzzing build (ci/qemu.sh --fuzz),
#     built once per input outside the clone: $VCUDA_CACHE/qemu-fuzz-<key>,
#     key = the QEMU tarball, every patch, the configure arguments and
#     ci/qemu.sh. That build takes a while (measured in docs/FUZZING.md),
#     which is why CI runs only vcuda's targets, briefly.
#
# A crash input is kept as OUT/<target>/crash-* (libFuzzer's name); rerun
# it with the target's binary and the file as its only argument.
set -uo pipefail
cd "$(dirname "$0")/.."

RUNS=20000
TOTAL=
QRUNS=
JOBS=$(nproc)
TARGETS="fuzz_decode fuzz_handshake fuzz_vm_frame fuzz_mgmt_request qemu_virtio_vcuda"
QEMU=1
OUT=
BUILD_ONLY=0
VCUDA_CACHE=${VCUDA_CACHE:-/var/cache/vcuda}

die() { echo "fuzz-long: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=${2:?}; shift ;;
	--total) TOTAL=${2:?}; shift ;;
	--qemu-runs) QRUNS=${2:?}; shift ;;
	--jobs) JOBS=${2:?}; shift ;;
	--targets) TARGETS=${2//,/ }; shift ;;
	--no-qemu) QEMU=0 ;;
	--out) OUT=${2:?}; shift ;;
	--build-only) BUILD_ONLY=1 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (--help)" ;;
	esac
	shift
done
[ $QEMU -eq 1 ] || TARGETS=$(echo "$TARGETS" | tr ' ' '\n' | grep -vx qemu_virtio_vcuda | tr '\n' ' ')
ntargets=$(echo $TARGETS | wc -w)
[ "$ntargets" -gt 0 ] || die "no targets"
if [ -n "$TOTAL" ]; then
	if [ -n "$QRUNS" ] && echo " $TARGETS " | grep -q ' qemu_virtio_vcuda '; then
		[ $ntargets -gt 1 ] || die "--total with --qemu-runs needs another target"
		RUNS=$(((TOTAL - QRUNS + ntargets - 2) / (ntargets - 1)))
	else
		RUNS=$(((TOTAL + ntargets - 1) / ntargets))
	fi
fi
QRUNS=${QRUNS:-$RUNS}
[ "$JOBS" -ge 1 ] || die "--jobs must be at least 1"
OUT=${OUT:-$VCUDA_CACHE/fuzz-long/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

say() { echo "fuzz-long: $*" >&2; }

# ---- builds --------------------------------------------------------------------
t0=$SECONDS
if echo " $TARGETS " | grep -q ' fuzz_'; then
	say "building vcuda's fuzz targets (make VARIANT=fuzz)"
	make -s -j"$(nproc)" VARIANT=fuzz >"$OUT/build-vcuda.log" 2>&1 ||
		{ tail -30 "$OUT/build-vcuda.log" >&2; die "make VARIANT=fuzz failed"; }
fi
QDIR=
if echo " $TARGETS " | grep -q ' qemu_virtio_vcuda '; then
	say "building (or finding) QEMU's fuzzing build (ci/qemu.sh --fuzz)"
	QDIR=$(VCUDA_CACHE=$VCUDA_CACHE bash ci/qemu.sh --fuzz 2>"$OUT/build-qemu.log" | tail -n 1)
	[ -x "$QDIR/bin/qemu-fuzz-x86_64" ] ||
		{ tail -30 "$OUT/build-qemu.log" >&2; die "ci/qemu.sh --fuzz failed"; }
	say "$(grep -E '^qemu: (cached|built)' "$OUT/build-qemu.log" | tail -n 1)"
fi
say "builds ready in $((SECONDS - t0)) s"
[ $BUILD_ONLY -eq 1 ] && exit 0

# ---- runs ----------------------------------------------------------------------
# cmd_of TARGET: the command line that runs one fuzzer process of TARGET
cmd_of() {
	case $1 in
	qemu_virtio_vcuda)
		echo "$QDIR/bin/qemu-fuzz-x86_64 --fuzz-target=generic-fuzz-virtio-vcuda-pci" ;;
	*) echo "build/fuzz/fuzz/$1" ;;
	esac
}

seeds_of() {
	case $1 in
	qemu_virtio_vcuda) ;; # generic-fuzz inputs are its own command language: none committed
	*) echo "tests/fuzz/corpus/${1#fuzz_}" ;;
	esac
}

run_target() { # TARGET -> OUT/TARGET/{corpus,job-N.log,crash-*}
	local t=$1 dir=$OUT/$1 per rest j pids=() s cmd
	mkdir -p "$dir/corpus"
	s=$(seeds_of "$t")
	if [ -n "$s" ] && [ -d "$s" ]; then
		cp -n "$s"/* "$dir/corpus/" 2>/dev/null || true
	fi
	# Inputs that once crashed a decoder must stay harmless.
	if ls tests/fuzz/regressions/"${t#fuzz_}"-* >/dev/null 2>&1; then
		$(cmd_of "$t") -runs=0 -timeout=10 tests/fuzz/regressions/"${t#fuzz_}"-* >"$dir/regressions.log" 2>&1 ||
			echo "regressions" >"$dir/regressions.failed"
	fi
	local want=$RUNS
	[ "$t" = qemu_virtio_vcuda ] && want=$QRUNS
	per=$((want / JOBS))
	rest=$((want - per * JOBS))
	cmd=$(cmd_of "$t")
	for ((j = 0; j < JOBS; j++)); do
		local n=$per
		[ $j -lt $rest ] && n=$((n + 1))
		[ $n -gt 0 ] || continue
		# shellcheck disable=SC2086
		$cmd -runs="$n" -seed=$((1000 + j)) -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
			-print_final_stats=1 -artifact_prefix="$dir/" "$dir/corpus" >"$dir/job-$j.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || echo "$p" >>"$dir/failed-jobs"
	done
}

# execs TARGET: executions its jobs made (stat::number_of_executed_units,
# or the last "#N" status line of a job that stopped early)
execs() {
	local n=0 f v
	for f in "$OUT/$1"/job-*.log; do
		[ -f "$f" ] || continue
		v=$(sed -n 's/^stat::number_of_executed_units: *//p' "$f" | tail -n 1)
		[ -n "$v" ] || v=$(grep -oE '^#[0-9]+' "$f" | tail -n 1 | tr -d '#')
		n=$((n + ${v:-0}))
	done
	echo $n
}

crashes() {
	local n
	n=$(find "$OUT/$1" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
	[ -f "$OUT/$1/failed-jobs" ] && [ "$n" -eq 0 ] && n=$(wc -l <"$OUT/$1/failed-jobs")
	[ -f "$OUT/$1/regressions.failed" ] && n=$((n + 1))
	echo "$n"
}

say "$RUNS executions per target (QEMU's: $QRUNS), $JOBS processes each, into $OUT"
declare -A secs
for t in $TARGETS; do
	t1=$SECONDS
	say "running $t"
	run_target "$t"
	secs[$t]=$((SECONDS - t1))
done

# ---- summary -------------------------------------------------------------------
total=0
bad=0
printf '%-20s %14s %8s %10s %8s %8s\n' target executions seconds 'exec/s' crashes corpus
for t in $TARGETS; do
	e=$(execs "$t")
	c=$(crashes "$t")
	s=${secs[$t]}
	printf '%-20s %14d %8d %10d %8d %8d\n' "$t" "$e" "$s" $((e / (s > 0 ? s : 1))) "$c" \
		"$(find "$OUT/$t/corpus" -type f | wc -l)"
	total=$((total + e))
	bad=$((bad + c))
	for f in "$OUT/$t"/crash-* "$OUT/$t"/leak-* "$OUT/$t"/timeout-* "$OUT/$t"/oom-*; do
		[ -f "$f" ] && echo "    kept: $f"
	done
done
printf '%-20s %14d %8s %10s %8d\n' total "$total" '' '' "$bad"
echo "fuzz-long: $total executions, $bad crashes; logs and corpora in $OUT"
[ "$bad" -eq 0 ]
