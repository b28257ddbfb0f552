#!/usr/bin/env bash
# PyTorch workloads inside the test VM on the GPU machine, compared with the
# same workloads run natively on the host in the same run: runs them natively
# (tests/workloads/run.py --mode native), builds the framework payload disk
# (ci/vm-framework-disk.sh) and boots the guest with it (ci/vm-test.sh, only
# the framework tests), the guest's server on the real GPU.
#   OUT=DIR [WORKLOADS="mlp-fp32 gpt2-fp16"] [VM_ACCEL=tcg|kvm] [VM_CPU=max] bash ci/vm-frameworks.sh
# TCG by default (with -cpu max: the frameworks' libraries use SSE4.2 and
# AVX, which TCG's default CPU model lacks: Python died with SIGILL); the
# GPU machine's KVM hangs this guest kernel early in boot (after "Probing
# EDD", measured there), not debugged.
# Needs the VM pack (ci/vm-test.sh --pack build/vmpack, built where apt works).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${WORKLOADS:-mlp-fp32 cnn-bf16 gpt2-fp16 llama-bf16}
out=${OUT:-/tmp/vcuda-vm-frameworks}
img=${FW_IMAGE:-/tmp/vcuda-framework.img} # GiBs: not under OUT
py=${WL_PYTHON:-/opt/torch/.venv/bin/python3}
mkdir -p "$out"
t0=$SECONDS
say() { echo "vm-frameworks: [$((SECONDS - t0)) s] $*"; }
# shellcheck disable=SC2086
"$py" tests/workloads/run.py --mode native --only "$(echo $W | tr ' ' ,)" --out "$out/native" --timeout 300
say "native runs done"
# shellcheck disable=SC2086
ci/vm-framework-disk.sh "$img" "$out/native" $W
say "payload disk built"
only=$(printf 'vm-%s,' $W)
VM_ACCEL=${VM_ACCEL:-tcg} VM_CPU=${VM_CPU:-max} VM_MEM=${VM_MEM:-16384} VM_CPUS=${VM_CPUS:-4} VM_TIMEOUT=${VM_TIMEOUT:-1500} \
	EXECUTOR=cuda VM_PREBUILT=${VM_PREBUILT:-build/vmpack} GPU_DISK="$img" VM_ONLY="$only" bash ci/vm-test.sh
