#!/bin/sh
# The GPU suite inside the test guest, from the payload disk (ci/vm-gpu-disk.sh
# builds it; tests/vm/run.sh mounts it at $G and sources this file). Each
# program and variant runs through the device as the unprivileged user and
# passes when its exit code and its stdout are byte for byte those of the
# native run on the host (expect/VARIANT/NAME.out and .rc).
G=${G:-/gpu}

gpu_prog() { # VARIANT NAME
	want_rc=$(cat "$G/expect/$1/$2.rc" 2>/dev/null || echo missing)
	LD_LIBRARY_PATH="$T/lib:$G/lib" timeout 300 $U "$G/bin/$1/$2" >/tmp/gpu.out 2>/tmp/gpu.err
	rc=$?
	if [ "$want_rc" = missing ]; then
		echo "no native result to compare with"
		return 1
	fi
	if [ "$rc" != "$want_rc" ]; then
		echo "exit code $rc, natively $want_rc; stderr:"
		tail -n 10 /tmp/gpu.err
		return 1
	fi
	if ! cmp -s /tmp/gpu.out "$G/expect/$1/$2.out"; then
		echo "stdout differs from the native run:"
		diff "$G/expect/$1/$2.out" /tmp/gpu.out | head -n 20
		return 1
	fi
	tail -n 1 /tmp/gpu.out
}

for v in static shared; do
	[ -d "$G/bin/$v" ] || continue
	for p in "$G/bin/$v"/*; do
		[ -x "$p" ] || continue
		t "gpu-$v-${p##*/}" gpu_prog "$v" "${p##*/}"
	done
done

# The host's real nvidia-smi inside the guest, through the guest NVML, while
# a guest process holds 1 GiB: its table shows the VM's total (the quota when
# the server has one: what cuMemGetInfo says in the guest), the VM's usage,
# and the holder among the processes.
gpu_smi() {
	rm -f /tmp/hold.out
	mkfifo /tmp/hold.in 2>/dev/null
	LD_LIBRARY_PATH="$T/lib" $U "$G/bin/hold-mem" 1024 </tmp/hold.in >/tmp/hold.out 2>&1 &
	hpid=$!
	exec 8>/tmp/hold.in
	i=0
	while [ ! -s /tmp/hold.out ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	read -r free total </tmp/hold.out
	echo "cuMemGetInfo in the holder: free $free MiB, total $total MiB"
	LD_LIBRARY_PATH="$T/lib" timeout 120 $U "$G/bin/nvidia-smi" >/tmp/smi.out 2>&1
	src=$?
	echo x >&8
	exec 8>&-
	wait $hpid
	cat /tmp/smi.out
	ok=0
	[ $src -eq 0 ] || { echo "nvidia-smi exited with $src"; ok=1; }
	grep -Eq "[0-9]+MiB */ *${total}MiB" /tmp/smi.out || { echo "no ${total}MiB total in the table"; ok=1; }
	grep -Eq "1024MiB */ *${total}MiB" /tmp/smi.out || { echo "not 1024MiB used of ${total}MiB"; ok=1; }
	grep -Eq "[[:space:]]$hpid[[:space:]].*1024MiB" /tmp/smi.out || { echo "holder $hpid not listed"; ok=1; }
	return $ok
}
[ -x "$G/bin/nvidia-smi" ] && t gpu-nvidia-smi gpu_smi

# make bench inside the guest (the disk holds bin/bench/cuda_bench when
# ci/bench-vm.sh built it): the CUDA benchmark through the device, every
# figure on a VMBENCH line for the host to set beside its native run.
# The page-locked gigabytes once more with no pool (VCUDA_PINNED_POOL=0):
# cudaMallocHost pinned in place too, its rows named *_inplace.
gpu_bench() {
	args=$(cat "$G/bin/bench/args" 2>/dev/null)
	# shellcheck disable=SC2086 # the sections, one word each
	LD_LIBRARY_PATH="$T/lib" VCUDA_DEBUG=1 timeout 500 $U "$G/bin/bench/cuda_bench" $args >/tmp/bench.out 2>/tmp/bench.err || {
		tail -n 5 /tmp/bench.err
		return 1
	}
	case " $args " in
	*" pinned_gib "*)
		# VCUDA_STATS: where the in-place gigabytes' time goes (each
		# operation's wait for the host; the rest is the guest's own
		# pinning), printed into the log.
		# VCUDA_DEBUG: a gigabyte not pinned in place says why.
		LD_LIBRARY_PATH="$T/lib" VCUDA_PINNED_POOL=0 VCUDA_STATS=1 VCUDA_DEBUG=1 timeout 500 $U \
			"$G/bin/bench/cuda_bench" pinned_gib >/tmp/bench2.out 2>/tmp/bench2.err || {
			tail -n 5 /tmp/bench2.err
			return 1
		}
		# A few lines, before the figures: the harness keeps a test's
		# last 30 lines.
		grep -h 'not pinned in place' /tmp/bench.err /tmp/bench2.err | sort | uniq -c | head -n 3
		grep -E '^  (cu|vc)' /tmp/bench2.err | head -n 6 | sed 's/^/VMSTATS	/'
		awk -F'\t' -v OFS='\t' '{ $1 = $1 "_inplace"; print }' /tmp/bench2.out >>/tmp/bench.out
		;;
	esac
	sed 's/^/VMBENCH	/' /tmp/bench.out
}
[ -x "$G/bin/bench/cuda_bench" ] && t gpu-bench gpu_bench
