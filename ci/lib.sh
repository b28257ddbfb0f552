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

# bench_ratios NATIVE.tsv OTHER.tsv NAME - both runs' "metric<TAB>value<TAB>unit"
# lines side by side (the same metrics in the same order), with OTHER's ratio
# to native: native/other for times, other/native for rates (100%: parity,
# higher is better for both).
bench_ratios() {
	printf '%-28s %12s %12s %8s\n' metric native "$3" ratio
	paste "$1" "$2" | awk -F'\t' '$1 == $4 {
		r = ($3 == "us" || $3 == "ms") ? $2 / $5 : $5 / $2
		printf "%-28s %12.2f %12.2f %7.0f%%\n", $1 " (" $3 ")", $2, $5, 100 * r }'
}
