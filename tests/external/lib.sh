# shellcheck shell=bash
# lib.sh - what the scripts of tests/external share (sourced).

# ext_server_start VCUDA_BUILD SOCK LOG [ARGS...]: vcuda-server on the real GPU
# at SOCK, its output in LOG, waited for up to 10 s; its pid in EXT_SERVER.
ext_server_start() {
	local vb=$1 sock=$2 log=$3
	shift 3
	"$vb/bin/vcuda-server" --socket "$sock" --executor cuda "$@" > "$log" 2>&1 &
	EXT_SERVER=$!
	for _ in $(seq 100); do
		[ -S "$sock" ] && break
		sleep 0.1
	done
}

# ext_server_stop: the server ext_server_start started, ended.
ext_server_stop() {
	kill "$EXT_SERVER" 2>/dev/null
	wait "$EXT_SERVER" 2>/dev/null
}
