#!/bin/sh
# The framework workloads inside the test guest, from the payload disk that
# ci/vm-framework-disk.sh builds (tests/vm/run.sh mounts it at $G and sources
# this file). The disk is a root file system with the GPU machine's Python
# and the frameworks' venv; each workload runs in a chroot of it through
# /dev/vcuda0 and the guest libcuda.so.1, and passes when its result line
# says what the native run on the host said (tests/workloads/run.py --mode
# guest compares them, by the same rules as host-local). As root: busybox
# has no chroot for another user, and the device needs no root anyway.
F=${G:-/gpu}

fw_mount() {
	mount -t proc proc "$F/proc" && mount -o bind /dev "$F/dev" && mount -t sysfs sys "$F/sys" &&
		mount -t tmpfs tmp "$F/tmp"
}

fw_run() { # WORKLOAD
	chroot "$F" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp PYTHONDONTWRITEBYTECODE=1 \
		LD_LIBRARY_PATH=/vcuda HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
		/opt/torch/.venv/bin/python3 /work/run.py --mode guest --expect-dir /expect --only "$1" \
		--python /opt/torch/.venv/bin/python3 --out "/tmp/wl-$1" --timeout 1200
}

if fw_mount; then
	for w in $(cat "$F/workloads.txt"); do
		t "vm-$w" fw_run "$w"
	done
else
	t vm-framework-mounts false
fi
