#!/usr/bin/env bash
# make vm-test: boot a real guest (Debian's 6.1 kernel under TCG, see
# ../shared/FACTS.md) with the virtio-vcuda-pci device attached to a
# vcuda-server, run the VM tests inside (tests/vm/run.sh) and report one
# line per test and a total. Exits non-zero when any test fails, the guest
# does not finish, or the host side finds a session that was not freed.
#
# Environment:
#   EXECUTOR=ci-standin|cuda  what serves the guest (default ci-standin; cuda
#                             on a GPU machine)
#   QEMU=PATH                 a qemu-system-x86_64 with the device (default:
#                             ci/qemu.sh builds or finds the cached one)
#   QEMU_FIRMWARE=DIR         its firmware (bios-256k.bin ...)
#   GUEST_ENV=FILE            ci/guest-kernel.sh's env file (default: run it)
#   VM_PREBUILT=DIR           a directory made by `ci/vm-test.sh --pack DIR`:
#                             kernel, initramfs and firmware, no building (the
#                             GPU machine has no apt and no network)
#   VM_REQUESTS=N             transport test size (default 100000)
#   VM_ONLY=a,b               run only the named tests
#   VM_SLOTS=N                session slots (max-sessions; default 4)
#   VM_SERVER_ARGS=...        more options for the VM's vcuda-server (--mem-quota 4G)
#   VM_TIMEOUT=S              guest time limit (default 900)
#   GPU_SUITE=DIR             also run this built GPU suite inside the guest,
#   GPU_EXPECT=DIR            against these native results (run-suite.sh
#                             --mode native's OUT/native): both go on a payload
#                             disk (ci/vm-gpu-disk.sh), built where this runs
#   GPU_DISK=IMAGE            a payload disk built already (or the frameworks'
#                             one: ci/vm-framework-disk.sh)
#   VM_ACCEL=tcg|kvm          how the guest runs (default tcg; kvm where
#                             /dev/kvm can boot a guest: the GPU machine)
#   VM_MEM=MiB, VM_CPUS=N     the guest's memory and CPUs; the memory is a
#                             memory-backend-memfd, which the device shares
#                             with the server, so that page-locked memory is
#                             pinned in place (VM_RAM=anon: QEMU's default
#                             anonymous RAM, where it is copied instead)
#   VM_SHM=SIZE               the device's shm-size (default 16G: 4 slots of
#                             4 GiB, host memory only as used); a session's
#                             pinned memory is its slot less ring and arena
#                             (the guest's pinned test holds two buffers of
#                             up to 768 MiB; the GPU suite's pinned_large
#                             1 GiB + 64 MiB)
#   VM_CPU=MODEL              QEMU's -cpu (TCG's default, qemu64, lacks
#                             SSE4.2 and AVX: frameworks need "max")
#   VCUDA_BUILD=DIR           vcuda-server and guest library (default build/release)
#   VM_SOAK=S                 run the soak inside the guest for S seconds
#                             (tests/vm/run.sh soak; with VM_ONLY=soak alone)
#   VM_SOAK_PROCS=N           its processes (default 4)
#   VM_SERVER_SOCKET=PATH     a running vcuda-server's --vm-socket to attach
#                             the VM to, instead of starting one here (its
#                             owner checks what the sessions left: the soak)
#   VM_VERBOSE=1              the guest kernel's messages on the console
#                             (no "quiet"; early printk on the serial port)
set -euo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh

EXECUTOR=${EXECUTOR:-ci-standin}
VM_REQUESTS=${VM_REQUESTS:-100000}
VM_TIMEOUT=${VM_TIMEOUT:-900}
VCUDA_BUILD=${VCUDA_BUILD:-build/release}
SLOTS=${VM_SLOTS:-4} # the device's max-sessions (a power of two)
SHM=${VM_SHM:-16G} # the device's shm-size: SLOTS slots, each a session's ring, arena and pinned pool
# The guest's pinned test: two buffers filling most of a slot's pool, up to
# 768 MiB each (a slot's ring, reply slots and arena take about 65 MiB).
shm_mib() { case $1 in *G) echo $((${1%G} * 1024)) ;; *M) echo "${1%M}" ;; *) echo $(($1 >> 20)) ;; esac; }
PINNED_MIB=$((($(shm_mib "$SHM") / SLOTS - 128) / 2))
[ "$PINNED_MIB" -le 768 ] || PINNED_MIB=768
PACK_DIR=

if [ "${1:-}" = "--pack" ]; then
	PACK_DIR=${2:?usage: ci/vm-test.sh --pack DIR}
fi

ci_tmpdir vm
log() { echo "vm-test: $*" >&2; }

# ---- what the guest runs -----------------------------------------------------
build_payload() { # DIR
	local p=$1 b=$VCUDA_BUILD
	mkdir -p "$p/bin" "$p/lib"
	cp tests/vm/run.sh "$p/run.sh"
	cp "$b/vm/vm_guest_test" "$b/vm/runas" "$b/tests/stress_client" "$b/tests/test_cuda_api" "$b/tests/test_cuda_objects" "$b/tests/test_nvml" \
		"$b/tests/test_hostile_api" \
		"$b/tests/cudart_smoke_static" "$b/tests/cudart_smoke_shared" "$p/bin/"
	cp "$b/guest/libcuda.so.1" "$b/guest/libnvidia-ml.so.1" "$p/lib/"
	cp -L "${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart.so.13" "$p/lib/"
}

if [ -n "${VM_PREBUILT:-}" ]; then
	# shellcheck disable=SC1091
	. "$VM_PREBUILT/env"
	VMLINUZ=$VM_PREBUILT/vmlinuz
	INITRD=$VM_PREBUILT/initrd.gz
	QEMU_FIRMWARE=$VM_PREBUILT/firmware
	QEMU=${QEMU:-$VM_PREBUILT/qemu-system-x86_64}
else
	if [ -z "${QEMU:-}" ]; then
		qdir=$(ci/qemu.sh ${PACK_DIR:+--static} | tail -n 1)
		QEMU=$qdir/bin/qemu-system-x86_64
		QEMU_FIRMWARE=${QEMU_FIRMWARE:-$qdir/share}
	fi
	if [ -z "${GUEST_ENV:-}" ]; then
		GUEST_ENV=$(ci/guest-kernel.sh | sed -n 's/^GUEST_ENV_FILE=//p' | tail -n 1)
	fi
	# shellcheck disable=SC1090
	. "$GUEST_ENV"
	log "guest kernel $KVER"
	make -s -j"$(nproc)" VARIANT=release >/dev/null
	make -s VARIANT=release cudart-smoke >/dev/null
	make -s -C guest-lib/kmod KDIR="$KBUILD" BUILD="$PWD/build/kmod-$KVER" >/dev/null
	build_payload "$VC_TMP/payload"
	ci/vm-initramfs.sh "$VC_TMP/initrd.gz" "$VC_TMP/payload" "build/kmod-$KVER/vcuda.ko" >"$VC_TMP/initrd.log" 2>&1 ||
		{ cat "$VC_TMP/initrd.log"; exit 1; }
	INITRD=$VC_TMP/initrd.gz
	if [ -n "$PACK_DIR" ]; then
		mkdir -p "$PACK_DIR/firmware"
		cp "$VMLINUZ" "$PACK_DIR/vmlinuz"
		cp "$INITRD" "$PACK_DIR/initrd.gz"
		cp "$QEMU" "$PACK_DIR/qemu-system-x86_64"
		cp "$QEMU_FIRMWARE"/*.bin "$PACK_DIR/firmware/"
		printf 'KVER=%s\n' "$KVER" >"$PACK_DIR/env"
		log "packed $(du -sh "$PACK_DIR" | cut -f1) into $PACK_DIR (kernel, initramfs, static QEMU, firmware)"
		exit 0
	fi
fi

# ---- the GPU suite's payload disk ------------------------------------------------
disk=()
if [ -n "${GPU_SUITE:-}" ]; then
	GPU_DISK=$VC_TMP/gpu.img
	ci/vm-gpu-disk.sh "$GPU_DISK" "$GPU_SUITE" "${GPU_EXPECT:?GPU_SUITE needs GPU_EXPECT (native results)}" >&2
fi
if [ -n "${GPU_DISK:-}" ]; then
	disk=(-drive "file=$GPU_DISK,if=virtio,format=raw,readonly=on")
	VM_MEM=${VM_MEM:-4096} # cuBLAS and cuFFT load hundreds of MiB
fi

# ---- the host side: the VM's vcuda-server, then QEMU ----------------------------
if [ -n "${VM_SERVER_SOCKET:-}" ]; then
	VM_SOCK=$VM_SERVER_SOCKET
	SERVER_PID=
	[ -S "$VM_SOCK" ] || { echo "vm-test: no vcuda-server at $VM_SOCK"; exit 1; }
else
	VM_SOCK=$VC_TMP/vm.sock
	# shellcheck disable=SC2086 # VM_SERVER_ARGS: more options, e.g. --mem-quota 4G
	"$VCUDA_BUILD/bin/vcuda-server" --vm-socket "$VM_SOCK" --executor "$EXECUTOR" ${VM_SERVER_ARGS:-} >"$VC_TMP/server.log" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 100); do
		[ -S "$VM_SOCK" ] && break
		sleep 0.05
	done
	[ -S "$VM_SOCK" ] || { cat "$VC_TMP/server.log"; exit 1; }
fi

append="console=ttyS0 panic=-1 quiet vmtest.slots=$SLOTS vmtest.requests=$VM_REQUESTS vmtest.executor=$EXECUTOR"
[ "$PINNED_MIB" -gt 0 ] && append="$append vmtest.pinned_mib=$PINNED_MIB"
[ -n "${VM_VERBOSE:-}" ] && append="${append/ quiet/} earlyprintk=serial,ttyS0 ignore_loglevel"
[ -n "${VM_ONLY:-}" ] && append="$append vmtest.only=$VM_ONLY"
[ -n "${VM_SOAK:-}" ] && append="$append vmtest.soak=$VM_SOAK vmtest.soakprocs=${VM_SOAK_PROCS:-4}"
log "booting: $QEMU (${VM_ACCEL:-tcg}), $SLOTS session slots in $SHM, executor $EXECUTOR"
t0=$SECONDS
set +e
accel=(-accel tcg)
[ "${VM_ACCEL:-tcg}" = kvm ] && accel=(-accel kvm -cpu host)
[ -n "${VM_CPU:-}" ] && accel+=(-cpu "$VM_CPU")
mem=${VM_MEM:-1536}
ram=(-M q35,memory-backend=ram -object "memory-backend-memfd,id=ram,size=${mem}M")
[ "${VM_RAM:-memfd}" = anon ] && ram=(-M q35)
timeout "$VM_TIMEOUT" "$QEMU" "${ram[@]}" -nodefaults "${accel[@]}" -smp "${VM_CPUS:-2}" -m "$mem" -display none -no-reboot \
	-L "$QEMU_FIRMWARE" -kernel "$VMLINUZ" -initrd "$INITRD" -append "$append" \
	-serial "file:$VC_TMP/console.log" \
	-chardev "socket,id=vcuda,path=$VM_SOCK,reconnect-ms=500" \
	-device "virtio-vcuda-pci,chardev=vcuda,shm-size=$SHM,max-sessions=$SLOTS" "${disk[@]}" \
	>"$VC_TMP/qemu.log" 2>&1
qrc=$?
set -e
secs=$((SECONDS - t0))

# ---- results ---------------------------------------------------------------------
tr -d '\r' <"$VC_TMP/console.log" >"$VC_TMP/console.txt" # the serial console ends lines with CRLF
mv "$VC_TMP/console.txt" "$VC_TMP/console.log"
grep -E '^(VMTEST|    )' "$VC_TMP/console.log" | grep -v '^VMTEST START' || true
rc=0
if ! grep -q '^VMTEST DONE' "$VC_TMP/console.log"; then
	echo "not ok - the guest did not finish (QEMU exit $qrc after ${secs}s); console and QEMU log:"
	tail -n 40 "$VC_TMP/console.log" | sed 's/^/    /'
	sed 's/^/    /' "$VC_TMP/qemu.log"
	rc=1
fi
grep -q ' fail=0$' "$VC_TMP/console.log" || rc=1
if [ $qrc -ne 0 ] && [ $qrc -ne 124 ]; then
	echo "not ok - QEMU exited with $qrc:"
	sed 's/^/    /' "$VC_TMP/qemu.log"
	rc=1
fi
# The host must have freed every session the guest opened (the killed
# process's included): the listener logs "session N (...) ended: REASON"
# when it has reaped the session's worker, whatever ended it.
if [ -n "$SERVER_PID" ]; then
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		echo "ok - vcuda-server is still serving after everything the guest did"
	else
		src=0
		wait "$SERVER_PID" 2>/dev/null || src=$?
		echo "not ok - vcuda-server died (exit status $src); the end of its log:"
		tail -n 15 "$VC_TMP/server.log" | sed 's/^/    /'
		rc=1
	fi
	# A worker stopped at the guest's end may take the listener's grace
	# (5 s) to go: a killed program's copy stuck in the driver.
	for _ in $(seq 120); do
		opened=$(grep -oE 'session [0-9]+ opened' "$VC_TMP/server.log" | sort -u | wc -l)
		ended=$(grep -oE 'session [0-9]+ \(.*\) ended: ' "$VC_TMP/server.log" | cut -d' ' -f2 | sort -u | wc -l)
		[ "$opened" -eq "$ended" ] && break
		sleep 0.1
	done
	if [ "$opened" -gt 0 ] && [ "$opened" -eq "$ended" ]; then
		echo "ok - host: all $opened guest sessions freed ($(grep -c FATAL "$VC_TMP/server.log" || true) of them FATAL on bad requests)"
	else
		echo "not ok - host: $opened sessions opened, $ended ended; server log:"
		tail -n 30 "$VC_TMP/server.log" | sed 's/^/    /'
		rc=1
	fi
	kill -TERM "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
fi
done_line=$(grep '^VMTEST DONE' "$VC_TMP/console.log" || echo "VMTEST DONE pass=? fail=?")
echo "vm-test: ${done_line#VMTEST DONE } in ${secs}s of ${VM_ACCEL:-tcg} guest time (executor $EXECUTOR)"
# Last, where a CI log's tail shows it: what failed.
failed=$(sed -n 's/^VMTEST FAIL \([^ ]*\).*/\1/p' "$VC_TMP/console.log" | tr '\n' ' ')
[ -n "$failed" ] && echo "vm-test: failed in the guest: $failed"
exit $rc
