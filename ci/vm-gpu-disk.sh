#!/usr/bin/env bash
# The VM's GPU payload disk: an ext4 image (built without root, mke2fs -d)
# holding the built GPU suite (bin/{static,shared}/NAME), the NVIDIA
# libraries its shared programs load from the toolkit (cuBLAS, cuFFT, cuRAND,
# cudart), the native results to compare with (expect/VARIANT/NAME.{out,rc},
# as tests/gpu/run-suite.sh --mode native writes them) and the guest's runner
# (tests/vm/gpu-run.sh as run.sh); on a GPU machine also the host's
# nvidia-smi and a memory holder (tests/vm/hold_mem.c).
#   ci/vm-gpu-disk.sh IMAGE SUITE_DIR NATIVE_RESULTS_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
img=${1:?usage: ci/vm-gpu-disk.sh IMAGE SUITE_DIR NATIVE_RESULTS_DIR}
suite=${2:?}
native=${3:?}
cuda=${CUDA_HOME:-/usr/local/cuda}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage/bin" "$stage/lib" "$stage/expect"
for v in static shared; do
	[ -d "$suite/$v" ] || continue
	mkdir -p "$stage/bin/$v" "$stage/expect/$v"
	for p in "$suite/$v"/*; do
		[ -f "$p" ] && [ -x "$p" ] || continue
		cp "$p" "$stage/bin/$v/"
		n=${p##*/}
		for e in out rc; do
			[ -f "$native/$v/$n.$e" ] && cp "$native/$v/$n.$e" "$stage/expect/$v/"
		done
	done
done
# The toolkit's libraries the programs need (never libcuda: the guest's own
# libcuda.so.1 stands in for it).
for p in "$stage"/bin/*/*; do
	[ -e "$p" ] || continue # no programs (a disk for the benchmark alone)
	{ LD_LIBRARY_PATH="$cuda/lib64" ldd "$p" 2>/dev/null || true; } | awk '$3 ~ /^\// {print $3}'
done | sort -u | { grep -F "$cuda" || true; } | while read -r lib; do
	cp -L "$lib" "$stage/lib/$(basename "$lib")"
done
# On a GPU machine: the host's real nvidia-smi, to run inside the guest
# through the guest NVML, and a CUDA program that holds device memory while
# it does (gpu-run.sh's gpu-nvidia-smi).
smi=$(command -v nvidia-smi || true)
if [ -n "$smi" ]; then
	cp -L "$smi" "$stage/bin/nvidia-smi"
	cc -O2 -o "$stage/bin/hold-mem" tests/vm/hold_mem.c -I"$cuda/include" -L"$cuda/lib64/stubs" -lcuda
fi
# VM_BENCH: bench/cuda/cuda_bench, run inside the guest by gpu-run.sh
# (ci/bench-vm.sh sets its figures beside the host's native ones), with the
# sections named in VM_BENCH_ARGS (all of them when empty).
if [ -n "${VM_BENCH:-}" ]; then
	mkdir -p "$stage/bin/bench"
	cp "$VM_BENCH" "$stage/bin/bench/cuda_bench"
	printf '%s\n' "${VM_BENCH_ARGS:-}" >"$stage/bin/bench/args"
fi
cp tests/vm/gpu-run.sh "$stage/run.sh"
size_mb=$(($(du -sm "$stage" | cut -f1) * 12 / 10 + 64))
rm -f "$img"
mke2fs -q -t ext4 -L vcudagpu -d "$stage" "$img" "${size_mb}M"
echo "vm-gpu-disk: $img: $(find "$stage/bin" -type f | wc -l) programs, $(ls "$stage/lib" | wc -l) libraries, ${size_mb} MiB"
