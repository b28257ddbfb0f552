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
