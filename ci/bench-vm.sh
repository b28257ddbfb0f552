#!/usr/bin/env bash
# The CUDA benchmark inside the test VM on the GPU machine, beside the same
# program run natively on the host, in one run: bench/cuda/cuda_bench on the
# host, then in the guest (ci/vm-test.sh, the real driver behind
# vcuda-server, the program on the guest's GPU disk), and the ratios as
# ci/bench-gpu.sh prints them. Page-locked memory lives in the session's
# pinned pool (its slot of the device's memory less ring and arena: VM_SHM
# 8G, 2 GiB a slot) or, registered or beyond the pool, in the guest's own
# pages pinned in place (the guest's RAM is a memfd that QEMU shares with
# the server; docs/ARCHITECTURE.md): pinned_gib runs a second time with no
# pool, every gigabyte in place (its rows *_inplace).
#
# The GPU machine is itself a virtual machine, and a KVM guest inside it
# barely runs: every exit goes through both hypervisors, and a kernel that
# TCG boots to its root mount in 3 s had not finished its early memory
# setup after 40 s under KVM (docs/PERFORMANCE.md). So the guest runs under
# TCG by default (VM_ACCEL=kvm where nested guests run well), and only the
# figures the host decides mean anything there: copies between the guest's
# page-locked pool and the GPU, which the GPU reads and writes in place.
# Pageable copies and launch latencies through TCG measure the emulator.
#   VM_PREBUILT=build/vmpack VM_BENCH_ARGS="pinned_gib" bash ci/bench-vm.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir bench-vm
vb=${VCUDA_BUILD:-build/release}
bin=${CUDA_BENCH:-$vb/bench/cuda_bench}
bench_bin bench/cuda/cuda_bench.cu "$bin"
args=${VM_BENCH_ARGS-pinned_gib}
# shellcheck disable=SC2086 # the sections, one word each
"$bin" $args > "$VC_TMP/native.tsv"
# The guest runs pinned_gib a second time with no pool (tests/vm/gpu-run.sh):
# its *_inplace rows stand beside the same native run's.
case " $args " in
*" pinned_gib "*) "$bin" pinned_gib | awk -F'\t' -v OFS='\t' '{ $1 = $1 "_inplace"; print }' >> "$VC_TMP/native.tsv" ;;
esac
mkdir -p "$VC_TMP/suite" "$VC_TMP/expect"
accel=${VM_ACCEL:-tcg}
cpu=max
[ "$accel" = kvm ] && cpu=host
VM_ACCEL=$accel VM_CPU=${VM_CPU:-$cpu} VM_CPUS=${VM_CPUS:-4} VM_MEM=${VM_MEM:-6144} VM_SHM=${VM_SHM:-8G} \
	EXECUTOR=cuda \
	VM_ONLY=gpu-bench VM_BENCH="$bin" VM_BENCH_ARGS="$args" GPU_SUITE="$VC_TMP/suite" GPU_EXPECT="$VC_TMP/expect" \
	bash ci/vm-test.sh > "$VC_TMP/vm.log" 2>&1 || true
[ -n "${OUT:-}" ] && mkdir -p "$OUT" && cp "$VC_TMP/vm.log" "$OUT/bench-vm.log"
sed -n 's/^    VMBENCH\t//p' "$VC_TMP/vm.log" > "$VC_TMP/vm.tsv"
if [ ! -s "$VC_TMP/vm.tsv" ]; then
	echo "bench-vm: no figures from the guest; the VM test said:"
	tail -n 30 "$VC_TMP/vm.log"
	exit 1
fi
echo "== CUDA inside a $accel guest through vcuda vs native on the host, same run ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
bench_ratios "$VC_TMP/native.tsv" "$VC_TMP/vm.tsv" vm
