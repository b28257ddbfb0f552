#!/usr/bin/env bash
# The VM's framework payload disk, built on the GPU machine: an ext4 image
# (mke2fs -d, no root needed) holding a root file system the test guest
# chroots into: the machine's Python and the frameworks' virtual environment
# at their own paths (the venv's interpreter link names them), every shared
# library they load that is not theirs (the ldd closure), the workloads
# (tests/workloads), the native results to compare with, the guest's
# libcuda.so.1 in /vcuda, and the guest's runner (tests/vm/framework-run.sh
# as run.sh). JAX, CuPy, Triton and other large packages the PyTorch
# workloads do not load are left out.
#   ci/vm-framework-disk.sh IMAGE NATIVE_DIR WORKLOAD...
# NATIVE_DIR: tests/workloads/run.py --mode native --out NATIVE_DIR's logs.
set -euo pipefail
cd "$(dirname "$0")/.."
img=${1:?usage: ci/vm-framework-disk.sh IMAGE NATIVE_DIR WORKLOAD...}
native=${2:?}
shift 2
[ $# -gt 0 ] || { echo "vm-framework-disk: name at least one workload" >&2; exit 2; }
venv=${VENV:-/opt/torch/.venv}
vb=${VCUDA_BUILD:-build/release}
py=$(readlink -f "$venv/bin/python3")
pylib=$(dirname "$(dirname "$py")")/lib/$(basename "$py")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# Python and the venv, at their own paths.
tar -C / -cf - --exclude='*/test' --exclude='*/__pycache__' "${py#/}" "${pylib#/}" usr/bin/env | tar -C "$stage" -xf -
tar -C / -cf - --exclude='*/__pycache__' \
	--exclude='*/site-packages/jax*' --exclude='*/site-packages/cupy*' --exclude='*/site-packages/triton*' \
	--exclude='*/site-packages/pyarrow*' --exclude='*/site-packages/llvmlite*' --exclude='*/site-packages/numba*' \
	--exclude='*/site-packages/cmake*' --exclude='*/site-packages/opencv*' --exclude='*/site-packages/cv2' \
	"${venv#/}" | tar -C "$stage" -xf -
# The shared libraries they need from the system (the loader included).
{
	ldd "$py"
	ldd /usr/bin/env
	find "$stage" -name '*.so*' -type f -print0 | xargs -0 -n 64 ldd 2>/dev/null
} | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u |
	while read -r lib; do
		case $lib in "$venv"/*) continue ;; esac
		[ -e "$stage$lib" ] || cp -L --parents "$lib" "$stage"
	done
mkdir -p "$stage"/{dev,proc,sys,tmp,vcuda,work,expect,etc}
# Who root is: Python's getpass (torch's caches) asks pwd for the uid.
printf 'root:x:0:0:root:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
cp "$vb/guest/libcuda.so.1" "$stage/vcuda/"
cp tests/workloads/*.py "$stage/work/"
for w in "$@"; do
	cp "$native/$w.native.log" "$stage/expect/"
done
printf '%s\n' "$@" >"$stage/workloads.txt"
cp tests/vm/framework-run.sh "$stage/run.sh"
size_mb=$(($(du -sm "$stage" | cut -f1) * 11 / 10 + 256))
rm -f "$img"
mke2fs -q -t ext4 -L vcudafw -d "$stage" "$img" "${size_mb}M"
echo "vm-framework-disk: $img: python $(basename "$py"), $(find "$stage" -name '*.so*' -type f | wc -l) shared objects, workloads: $*, ${size_mb} MiB"
