#!/usr/bin/env bash
# nvml-smi.sh - on the GPU machine: the host's real nvidia-smi through vcuda's
# guest NVML (build/<variant>/guest/libnvidia-ml.so.1, put first with
# LD_LIBRARY_PATH) against a vcuda-server started with a device-memory quota,
# while a CUDA process of that server (through the guest libcuda.so.1) holds
# some memory. Checks that nvidia-smi's table shows the quota as the total
# memory and the server's usage as used, that its process table lists the
# holder, that --query-gpu agrees, that cuMemGetInfo (and PyTorch's
# mem_get_info, where PyTorch is installed) agree with it, and runs the
# guest NVML's Check suite against the real driver.
#
#   bash tests/gpu/nvml-smi.sh        (VCUDA_BUILD=build/release, QUOTA_MIB=4096,
#                                      HOLD_MIB=1024, OUT=build/nvml-smi, TORCH_PYTHON)
#
# Everything it saw is kept under $OUT: nvidia-smi's table, the entry points
# nvidia-smi asked for that the guest NVML does not serve (VCUDA_DEBUG names
# each once on stderr: nvidia-smi.unsupported), the server's log, and, when
# build/nvml-trace is built (make -C tools/nvml-trace), a trace of every
# NVML call of nvidia-smi natively and through the guest NVML.
set -euo pipefail
cd "$(dirname "$0")/../.."
. ci/lib.sh
ci_tmpdir nvml-smi

vb=${VCUDA_BUILD:-build/release}
quota_mib=${QUOTA_MIB:-4096}
hold_mib=${HOLD_MIB:-1024}
out=${OUT:-build/nvml-smi}
py=${TORCH_PYTHON:-/opt/torch/.venv/bin/python3}
mkdir -p "$out"
smi=$(command -v nvidia-smi || true)
if [ -z "$smi" ] || ! "$smi" -L >/dev/null 2>&1; then
	echo "nvml-smi: no NVIDIA GPU (nvidia-smi) here; this runs on the GPU machine" >&2
	exit 2
fi
# Built here only when missing (the GPU machine gets builds carried in).
for f in bin/vcuda-server guest/libcuda.so.1 guest/libnvidia-ml.so.1 tests/test_nvml; do
	[ -e "$vb/$f" ] && continue
	make -j"$(nproc)" VARIANT=release "$vb/bin/vcuda-server" "$vb/guest/libcuda.so.1" \
		"$vb/guest/libnvidia-ml.so.1" "$vb/tests/test_nvml" >"$out/build.log" 2>&1 ||
		{ tail -20 "$out/build.log"; exit 1; }
	break
done
guest=$PWD/$vb/guest

# The server: the real driver and the host's own NVML (its library path must
# not name the guest's directory), with a quota.
export VCUDA_SOCKET="$VC_TMP/vcuda.sock" VCUDA_ADMIN_SOCKET="$VC_TMP/admin.sock"
"$vb/bin/vcuda-server" --socket "$VCUDA_SOCKET" --executor cuda --admin-socket "$VCUDA_ADMIN_SOCKET" \
	--mem-quota "${quota_mib}M" >"$out/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -S "$VCUDA_SOCKET" ] && break; sleep 0.05; done
[ -S "$VCUDA_SOCKET" ] || { cat "$out/server.log"; exit 1; }

# A CUDA process of the server: allocates HOLD_MIB, says what cuMemGetInfo
# shows, and holds the memory until told.
cat >"$VC_TMP/holder.c" <<'C'
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	CUdevice d; CUcontext c; CUdeviceptr p; size_t f, t;
	char b;
	if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
	    cuMemAlloc(&p, strtoull(argv[1], NULL, 0) << 20) || cuMemGetInfo(&f, &t))
		return 1;
	printf("%zu %zu\n", f >> 20, t >> 20);
	fflush(stdout);
	(void)argc;
	return read(0, &b, 1) < 0;
}
C
cc -O2 -o "$VC_TMP/holder" "$VC_TMP/holder.c" -I"${CUDA_HOME:-/usr/local/cuda}/include" -L"$guest" \
	-Wl,-rpath,"$guest" -lcuda
mkfifo "$VC_TMP/hold"
LD_LIBRARY_PATH=$guest "$VC_TMP/holder" "$hold_mib" <"$VC_TMP/hold" >"$VC_TMP/holder.out" &
HOLDER=$!
exec 9>"$VC_TMP/hold"
for _ in $(seq 300); do [ -s "$VC_TMP/holder.out" ] && break; sleep 0.1; done
read -r cu_free cu_total <"$VC_TMP/holder.out" || { echo "nvml-smi: the CUDA holder failed" >&2; exit 1; }
rc=0
fail() { echo "nvml-smi: FAIL: $*" >&2; rc=1; }
echo "cuMemGetInfo in the holder: free ${cu_free} MiB, total ${cu_total} MiB"
[ "$cu_total" = "$quota_mib" ] || fail "cuMemGetInfo total ${cu_total} MiB, the quota is ${quota_mib} MiB"
[ "$cu_free" -le $((quota_mib - hold_mib)) ] || fail "cuMemGetInfo free ${cu_free} MiB > quota - held"

# nvidia-smi's default view, through the guest NVML.
src=0
VCUDA_DEBUG=1 LD_LIBRARY_PATH="$guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$smi" \
	>"$out/nvidia-smi.txt" 2>"$out/nvidia-smi.stderr" || src=$?
[ $src -eq 0 ] || fail "nvidia-smi exited with $src (see $out/nvidia-smi.stderr)"
cat "$out/nvidia-smi.txt"
# The same view and -q through tools/nvml-trace, natively and through the
# guest NVML: every NVML call and private-table slot nvidia-smi made, with
# its answer (trace-native-*.txt and trace-guest-*.txt, to compare).
trace=$PWD/build/nvml-trace
real=$(ldconfig -p | awk '/libnvidia-ml\.so\.1 /{print $NF; exit}')
if [ -e "$trace/libnvidia-ml.so.1" ] && [ -n "$real" ]; then
	for view in default q; do
		args=(); [ $view = q ] && args=(-q)
		rm -f "$out/trace-native-$view.txt" "$out/trace-guest-$view.txt"
		NVML_TRACE_TARGET=$real NVML_TRACE_LOG=$out/trace-native-$view.txt LD_LIBRARY_PATH=$trace \
			"$smi" "${args[@]}" >"$out/nvidia-smi-native-$view.txt" 2>&1 || true
		NVML_TRACE_TARGET=$guest/libnvidia-ml.so.1 NVML_TRACE_LOG=$out/trace-guest-$view.txt \
			LD_LIBRARY_PATH="$trace:$guest" "$smi" "${args[@]}" >"$out/nvidia-smi-guest-$view.txt" 2>&1 || true
	done
	echo "nvml-trace: $(wc -l <"$out/trace-native-default.txt") calls natively," \
	     "$(wc -l <"$out/trace-guest-default.txt") through the guest NVML (default view)"
fi
grep 'not supported in a VM' "$out/nvidia-smi.stderr" | sed 's/^vcuda: NVML //; s/:.*//' | sort -u \
	>"$out/nvidia-smi.unsupported" || true
echo "entry points nvidia-smi asked for that the guest NVML refuses: $(wc -l <"$out/nvidia-smi.unsupported")" \
     "(listed in $out/nvidia-smi.unsupported)"
grep -Eq "[0-9]+MiB */ *${quota_mib}MiB" "$out/nvidia-smi.txt" ||
	fail "the table does not show ${quota_mib}MiB as the total memory"
grep -Eq "${hold_mib}MiB */ *${quota_mib}MiB" "$out/nvidia-smi.txt" ||
	fail "the table does not show ${hold_mib}MiB used of ${quota_mib}MiB"
grep -Eq "[[:space:]]$HOLDER[[:space:]].*${hold_mib}MiB" "$out/nvidia-smi.txt" ||
	fail "the process table does not list the holder (pid $HOLDER) with ${hold_mib}MiB"
q=$(LD_LIBRARY_PATH="$guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$smi" \
	--id=0 --query-gpu=memory.total,memory.used --format=csv,noheader,nounits 2>>"$out/nvidia-smi.stderr" | tr -d ' ')
echo "nvidia-smi --query-gpu=memory.total,memory.used: $q"
[ "$q" = "${quota_mib},${hold_mib}" ] || fail "--query-gpu says $q, expected ${quota_mib},${hold_mib}"

# nvidia-smi -q (where nvml-trace was built, both ways): each of these
# fields that the host's NVML fills natively must not be N/A through the
# guest NVML (by design N/A: the minor number, the sparse operation mode
# and the host's PCIe generation, the host's own devices and modes; not
# served: the part number, which nvidia-smi reads through a slot of NVML's
# private table that vcuda does not know).
if [ -s "$out/nvidia-smi-native-q.txt" ] && [ -s "$out/nvidia-smi-guest-q.txt" ]; then
	missing=$(python3 - "$out/nvidia-smi-native-q.txt" "$out/nvidia-smi-guest-q.txt" <<'PY'
import re, sys
want = ["Addressing Mode", "Accounting Mode", "Accounting Mode Buffer Size", "GPU PDI", "Module Id",
        "OEM Object", "ECC Object", "GPU C2C Mode", "GSP Firmware Version", "Device Max",
        "Idle", "SW Power Cap", "Active Sessions", "SRAM Correctable", "DRAM Uncorrectable",
        "SRAM Threshold Exceeded", "Channel Repair Pending", "Correctable Error", "Pending", "Max",
        "GPU T.Limit Temp", "Base Classcode"]
def fields(path):
    d = {}
    for line in open(path, errors="replace"):
        m = re.match(r"\s+([^:]+?)\s+:\s(.*)$", line)
        if m and m.group(1) not in d:
            d[m.group(1)] = m.group(2).strip()
    return d
n, g = fields(sys.argv[1]), fields(sys.argv[2])
print(" ".join("'%s'" % k for k in want if n.get(k, "N/A") != "N/A" and g.get(k, "N/A") == "N/A"))
PY
)
	echo "nvidia-smi -q: N/A natively $(grep -c ': N/A' "$out/nvidia-smi-native-q.txt"), through the guest NVML" \
	     "$(grep -c ': N/A' "$out/nvidia-smi-guest-q.txt")"
	[ -z "$missing" ] || fail "nvidia-smi -q shows N/A through the guest NVML where natively it has a value: $missing"
	# The holder is a compute process ("C"), as natively: not "M+C+G".
	grep -Eq "^ +Type +: C$" "$out/nvidia-smi-guest-q.txt" ||
		fail "nvidia-smi -q does not type the holder as a compute process (C)"
fi

# PyTorch's view, when it is installed: the same quota, the holder's memory used.
if [ -x "$py" ]; then
	t=$(LD_LIBRARY_PATH="$guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$py" -c \
		'import torch; f, t = torch.cuda.mem_get_info(); print(f >> 20, t >> 20)' 2>"$out/torch.stderr") ||
		fail "PyTorch mem_get_info failed (see $out/torch.stderr)"
	echo "PyTorch mem_get_info: free/total MiB $t"
	[ "${t#* }" = "$quota_mib" ] || fail "PyTorch total ${t#* } MiB, the quota is ${quota_mib} MiB"
fi
echo x >&9
exec 9>&-
wait "$HOLDER" || true

# The guest NVML's Check suite, against the real driver and the host's NVML.
if ! LD_LIBRARY_PATH="$guest${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$vb/tests/test_nvml" \
	>"$out/test_nvml.log" 2>&1; then
	tail -20 "$out/test_nvml.log"
	rc=1
else
	tail -1 "$out/test_nvml.log"
fi
kill -TERM "$SERVER_PID" 2>/dev/null || true
wait "$SERVER_PID" || true
echo "nvml-smi: results in $out"
[ $rc -eq 0 ] && echo "PASS nvml-smi"
exit $rc
