#!/usr/bin/env bash
# ggml.sh - ggml's test-backend-ops (every operator of the CUDA backend checked
# against the CPU backend), built here and run on the GPU machine natively and
# through vcuda; every operator test that is OK natively must be OK through
# vcuda.
#
#   ggml.sh build SRC OUT          SRC: a checkout of ggml-org/ggml (or llama.cpp)
#   ggml.sh run OUT VCUDA_BUILD LOGS   (OPS=NAME,...: only those operators;
#                                       TMO=seconds per run, default 280)
#
# Nothing of ggml is kept in this repository. The build takes about 20 minutes
# on two cores (CUDA for sm_90 only); OUT holds test-backend-ops and ggml's
# shared libraries (about 40 MB as .tar.xz).
set -u
# shellcheck source=tests/external/lib.sh
. "$(dirname "$0")/lib.sh"
cmd=${1:-}
case "$cmd" in
build)
	src=$2 out=$3
	PATH=/usr/local/cuda/bin:$PATH cmake -S "$src" -B "$src/build" -G Ninja -DGGML_CUDA=ON \
		-DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_BUILD_TESTS=ON -DGGML_BUILD_EXAMPLES=OFF \
		-DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
		-DCMAKE_EXE_LINKER_FLAGS=-Wl,--allow-shlib-undefined >/dev/null || exit 1
	PATH=/usr/local/cuda/bin:$PATH ninja -C "$src/build" test-backend-ops || exit 1
	mkdir -p "$out"
	cp "$src/build/bin/test-backend-ops" "$out/"
	find "$src/build" -name 'libggml*.so.0' -exec cp -L {} "$out/" \;
	echo "built: $(find "$out" -maxdepth 1 -type f -printf '%f ')"
	;;
run)
	out=$(cd "$2" && pwd) vb=$(cd "$3" && pwd) logs=$4
	mkdir -p "$logs"
	logs=$(cd "$logs" && pwd)
	PY=${PY:-/opt/torch/.venv/bin/python3}
	nccl=$("$PY" -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))' 2>/dev/null)
	libs=$out:/usr/local/cuda/lib64${nccl:+:$nccl}
	args=(test -b CUDA0)
	[ -n "${OPS:-}" ] && args+=(-o "$OPS")
	LD_LIBRARY_PATH=$libs timeout "${TMO:-280}" "$out/test-backend-ops" "${args[@]}" > "$logs/native.txt" 2>&1
	echo "native rc $?"
	sock=$logs/server.sock
	ext_server_start "$vb" "$sock" "$logs/server.log" -v
	LD_LIBRARY_PATH=$vb/guest:$libs VCUDA_SOCKET=$sock timeout "${TMO:-280}" \
		"$out/test-backend-ops" "${args[@]}" > "$logs/vcuda.txt" 2>&1
	echo "vcuda rc $?"
	ext_server_stop
	# "  OP(params): OK" per test; colours stripped.
	status() { sed -E 's/\x1b\[[0-9;]*m//g' "$1" | grep -E '^  [A-Z_0-9]+\(.*\): (OK|FAIL)' | sed -E 's/^  //'; }
	status "$logs/native.txt" | sort > "$logs/native.status"
	status "$logs/vcuda.txt" | sort > "$logs/vcuda.status"
	ok_n=$(grep -c ': OK$' "$logs/native.status")
	ok_v=$(grep -c ': OK$' "$logs/vcuda.status")
	# A test counts against vcuda when it is OK natively and FAIL through
	# vcuda; tests the vcuda run did not reach (its time ran out) do not.
	worse=$(LC_ALL=C comm -12 <(sed -n 's/: OK$//p' "$logs/native.status" | LC_ALL=C sort) \
		<(sed -n 's/: FAIL$//p' "$logs/vcuda.status" | LC_ALL=C sort))
	echo "ggml test-backend-ops: native $ok_n OK, vcuda $ok_v OK of $(wc -l < "$logs/vcuda.status") reached"
	if [ -n "$worse" ]; then
		echo "$worse" | sed 's/^/WORSE /' | head -50
		echo "$(echo "$worse" | wc -l) OK natively and FAIL through vcuda"
		exit 1
	fi
	echo "none OK natively and FAIL through vcuda"
	;;
*) sed -n 2,15p "$0"; exit 2 ;;
esac
