#!/usr/bin/env bash
# make demo: CUDA work through vcuda, first host-locally, then from inside a
# VM through the virtio-vcuda device:
#  1. a vcuda-server and client processes: vcuda-demo (the driver API, step
#     by step: copies through the arena, a memset, a kernel launch, an
#     error), then an nvcc-built program (NVIDIA's static cudart) over the
#     guest libcuda.so.1;
#  2. the main job: QEMU (TCG) with virtio-vcuda-pci, a Debian guest with
#     vcuda.ko and the guest libcuda.so.1, running the driver API suite and
#     NVIDIA-runtime programs inside the guest (ci/vm-test.sh).
# On a machine with an NVIDIA GPU the server runs the real driver; without
# one, the CI stand-in for a GPU, and it says so. DEMO_VM=0 skips part 2.
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir demo

executor=ci-standin
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
	executor=cuda
fi
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
	make -s VARIANT=release cudart-smoke
fi
export VCUDA_SOCKET="$VC_TMP/vcuda.sock"
echo "== starting vcuda-server --executor $executor"
[ $executor = ci-standin ] && echo "   (no GPU here: the CI stand-in keeps device memory in host RAM and does not run kernels)"
build/release/bin/vcuda-server --socket "$VCUDA_SOCKET" --executor $executor >"$VC_TMP/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
echo "== vcuda-demo: CUDA through vcuda, step by step"
build/release/demo/vcuda-demo
if [ -x build/release/tests/cudart_smoke_static ]; then
	echo "== an nvcc-built program (static cudart) over the guest libcuda.so.1"
	LD_LIBRARY_PATH=$PWD/build/release/guest build/release/tests/cudart_smoke_static
fi
if [ $executor = cuda ] && command -v nvidia-smi >/dev/null; then
	echo "== nvidia-smi through the guest NVML (libnvidia-ml.so.1): the GPU as a guest sees it"
	LD_LIBRARY_PATH=$PWD/build/release/guest nvidia-smi || true
fi
stop_server
echo "== server log"
sed 's/^/   server: /' "$VC_TMP/server.log"

if [ "${DEMO_VM:-1}" != 0 ]; then
	echo
	echo "== inside a VM: QEMU + virtio-vcuda-pci, guest vcuda.ko and libcuda.so.1 (builds QEMU once, cached)"
	EXECUTOR=$executor VM_ONLY=device-node,transport,cuda-driver-api,cudart-static,cudart-shared \
		VM_REQUESTS=20000 bash ci/vm-test.sh
fi
