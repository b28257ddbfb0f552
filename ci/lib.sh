# Shared helpers for the ci/ scripts: a private directory, a vcuda-server in it, and the CUDA benchmarks' build and ratios.

# ci_tmpdir NAME: make $VC_TMP, removed (and background jobs killed) at exit.
ci_tmpdir() {
	VC_TMP=$(mktemp -d "/tmp/vcuda-$1.XXXXXX")
	export VC_TMP
	trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$VC_TMP"' EXIT
}

# start_server BIN [ARGS...]: start vcuda-server on $VC_TMP/vcuda.sock, wait
# until it listens; sets SERVER_PID and VCUDA_SOCKET.
start_server() {
	local bin=$1
	shift
	export VCUDA_SOCKET="$VC_TMP/vcuda.sock"
	# A socket left by a server that was killed (dead_server) would look
	# ready before this one has bound it, and refuse the first client.
	rm -f "$VCUDA_SOCKET"
	"$bin" --socket "$VCUDA_SOCKET" --executor ci-standin "$@" >"$VC_TMP/server.log" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 100); do
		[ -S "$VCUDA_SOCKET" ] && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "vcuda-server did not start:" >&2
	cat "$VC_TMP/server.log" >&2
	return 1
}

# stop_server: SIGTERM, wait; fails if the server did not exit cleanly (a
# sanitizer report at exit makes it exit non-zero).
stop_server() {
	local rc=0
	kill -TERM "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" || rc=$?
	if [ $rc -ne 0 ]; then
		echo "vcuda-server exited with $rc; its log:" >&2
		tail -50 "$VC_TMP/server.log" >&2
	fi
	return $rc
}

# bench_bin SOURCE BINARY [NVCC_ARGS...] - BINARY, built from the CUDA
# benchmark SOURCE with nvcc when it is missing (a GPU machine has the toolkit).
bench_bin() {
	local src=$1 bin=$2
	shift 2
	[ -x "$bin" ] && return 0
	mkdir -p "$(dirname "$bin")"
	/usr/local/cuda/bin/nvcc -O2 -o "$bin" "$src" "$@"
}

# The ratio rule both tables use, as an awk function: OTHER's ratio to native,
# native/other for times, other/native for rates (1: parity, higher is better
# for both).
BENCH_RATIO_AWK='function ratio(unit, nat, oth) { return (unit == "us" || unit == "ms") ? nat / oth : oth / nat }'

# bench_ratios NATIVE.tsv OTHER.tsv NAME - both runs' "metric<TAB>value<TAB>unit"
# lines side by side (the same metrics in the same order), with OTHER's ratio
# to native (BENCH_RATIO_AWK; 100%: parity).
bench_ratios() {
	printf '%-28s %12s %12s %8s\n' metric native "$3" ratio
	paste "$1" "$2" | awk -F'\t' "$BENCH_RATIO_AWK"'
	$1 == $4 { printf "%-28s %12.2f %12.2f %7.0f%%\n", $1 " (" $3 ")", $2, $5, 100 * ratio($3, $2, $5) }'
}

# bench_ratios_rounds DIR ROUNDS NAME - as bench_ratios, over ROUNDS pairs of
# runs (DIR/native.K.tsv and DIR/other.K.tsv, K = 1..ROUNDS, the same metrics
# in the same order): each metric's median both ways, the ratio of the
# medians, and the range of the rounds' own ratios. A metric missing from a
# round (a program that failed there) is shown from the rounds that have it.
bench_ratios_rounds() {
	local dir=$1 rounds=$2 k files=()
	for ((k = 1; k <= rounds; k++)); do
		files+=("$dir/native.$k.tsv" "$dir/other.$k.tsv")
	done
	printf '%-28s %12s %12s %8s  %s\n' metric native "$3" ratio "rounds ($rounds)"
	awk -F'\t' "$BENCH_RATIO_AWK"'
	function median(s, n,    a, i, j, t) {
		split(s, a, " ")
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	FNR == 1 { side = (FILENAME ~ /\/native\.[0-9]+\.tsv$/) ? "n" : "o"; if (side == "n") round++ }
	NF >= 3 && $2 + 0 > 0 {
		key = $1
		if (!(key in unit)) { order[++nm] = key; unit[key] = $3 }
		vals[side, key] = vals[side, key] " " $2; cnt[side, key]++
		got[side, key, round] = $2
	}
	END {
		for (i = 1; i <= nm; i++) {
			key = order[i]
			if (!cnt["n", key] || !cnt["o", key])
				continue
			nat = median(vals["n", key], cnt["n", key]); oth = median(vals["o", key], cnt["o", key])
			lo = ""; hi = ""
			for (k = 1; k <= round; k++)
				if ((("n", key, k) in got) && (("o", key, k) in got)) {
					r = 100 * ratio(unit[key], got["n", key, k], got["o", key, k])
					if (lo == "" || r < lo) lo = r
					if (hi == "" || r > hi) hi = r
				}
			printf "%-28s %12.2f %12.2f %7.0f%%  %.0f-%.0f%%\n", key " (" unit[key] ")", nat, oth,
			       100 * ratio(unit[key], nat, oth), lo, hi
		}
	}' "${files[@]}"
}
