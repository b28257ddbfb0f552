#!/usr/bin/env bash
# libsamples.sh - build NVIDIA's CUDALibrarySamples (cuBLAS, cuBLASLt, cuFFT,
# cuRAND, cuSOLVER, cuSPARSE) here, run them on the GPU machine natively and
# through vcuda, and compare what each printed.
#
#   libsamples.sh build SRC OUTDIR      SRC: a checkout of NVIDIA/CUDALibrarySamples
#   libsamples.sh run OUTDIR VCUDA_BUILD LOGDIR   (ONLY=REGEX: the samples named so)
#
# Nothing of the samples is kept in this repository: SRC is fetched by whoever
# runs it. Each sample is one program built from the sources of its folder; the
# multi-GPU and MPI ones (Mg, mgpu, Mp) are left out, as are samples that need
# a newer architecture than the H100's. A sample passes when it exits 0 through
# vcuda whenever it does natively, and its output matches native's once
# timings and addresses are masked.
set -u
# shellcheck source=tests/external/lib.sh
. "$(dirname "$0")/lib.sh"
cmd=${1:-}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
ARCH=${ARCH:-90}

compile() { # out sources...
	local out=$1 lang=(-x cu)
	shift
	case "$*" in *.c\ *|*.c) lang=() ;; esac
	"$NVCC" -O2 -std=c++17 -arch=sm_"$ARCH" -w "${inc[@]}" "${lang[@]}" "$@" -o "$out" \
		-lcublasLt -lcublas -lcufft -lcurand -lcusolver -lcusparse \
		-L"$(dirname "$NVCC")/../lib64/stubs" -lcuda 2>"$out.buildlog"
}

build_one() { # dir out: one program, or one per source with a main() of its own
	local d=$1 out=$2 srcs mains f rc=0
	inc=(-I "$d")
	srcs=$(find "$d" -maxdepth 1 \( -name '*.cu' -o -name '*.cpp' -o -name '*.c' \) | sort)
	[ -n "$srcs" ] || return 2
	for u in "$d" "$d/.." "$d/../.." ; do
		[ -d "$u/utils" ] && inc+=(-I "$u/utils")
		[ -d "$u/Common" ] && inc+=(-I "$u/Common")
	done
	# shellcheck disable=SC2086
	mains=$(grep -l -E '^\s*int\s+main\s*\(' $srcs)
	if [ "$(echo "$mains" | grep -c .)" -gt 1 ]; then
		for f in $mains; do
			f=$(basename "$f")
			compile "$out-${f%.*}" "$d/$f" && rm -f "$out-${f%.*}.buildlog" || rc=1
		done
		return $rc
	fi
	# shellcheck disable=SC2086
	compile "$out" $srcs && rm -f "$out.buildlog"
}

case "$cmd" in
build)
	src=$2 out=$3
	mkdir -p "$out"
	n=0 ok=0
	while read -r d; do
		rel=${d#"$src"/}
		case "$rel" in *Mg*|*mgpu*|*Mp*|*Emulated*|*Fp8*|*fp8*|*Nvfp4*|*Blk128*|*lto_callback*|*GreenContext*) continue ;; esac
		name=$(echo "$rel" | tr '/' '_')
		n=$((n + 1))
		if build_one "$d" "$out/$name"; then ok=$((ok + 1)); else echo "build failed: $rel"; fi
	done < <(for lib in cuBLAS cuBLASLt cuFFT cuRAND cuSOLVER cuSPARSE; do
		find "$src/$lib" -mindepth 1 -type d -not -path '*/utils*' -not -path '*/cmake*' -not -path '*/Common*' |
			while read -r d; do
				[ -n "$(find "$d" -maxdepth 1 \( -name '*.cu' -o -name '*.cpp' -o -name '*.c' \) -print -quit)" ] && echo "$d"
			done
	done | sort)
	echo "built $ok of $n"
	;;
run)
	out=$2 vb=$(cd "$3" && pwd) logs=$4
	mkdir -p "$logs"
	sock=$logs/server.sock
	ext_server_start "$vb" "$sock" "$logs/server.log" -v
	pass=0 fail=0
	mask='s/[0-9]+(\.[0-9]+)? ?(ms|us|s|sec|seconds|GB\/s|GFLOPS|TFLOPS)\b/T/g; s/-?[0-9]+(\.[0-9]+)? ?%/P/g; s/0x[0-9a-f]+/ADDR/g'
	for b in "$out"/*; do
		if [ ! -f "$b" ] || [ ! -x "$b" ]; then continue; fi
		n=$(basename "$b")
		[[ "$n" =~ ${ONLY:-.} ]] || continue
		(cd "$logs" && timeout 120 "$b" > "$n.native" 2>&1); nrc=$?
		(cd "$logs" && LD_LIBRARY_PATH=$vb/guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} VCUDA_SOCKET=$sock \
			timeout 120 "$b" > "$n.vcuda" 2>&1); vrc=$?
		if [ "$nrc" = "$vrc" ] && diff -q <(sed -E "$mask" "$logs/$n.native") <(sed -E "$mask" "$logs/$n.vcuda") >/dev/null; then
			pass=$((pass + 1)); echo "ok $n (rc $nrc)"
		else
			fail=$((fail + 1)); echo "FAIL $n (native rc $nrc, vcuda rc $vrc)"
		fi
	done
	ext_server_stop
	echo "libsamples: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	;;
*) sed -n 2,16p "$0"; exit 2 ;;
esac
