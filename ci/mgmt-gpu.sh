#!/usr/bin/env bash
# ci/mgmt-gpu.sh: the host manager's quotas on a real GPU (issue: host
# manager, "on the GPU machine"). vcuda-mgmtd reads the GPU through NVML; two
# VMs with memory quotas of 4 GiB and 8 GiB share GPU 0, each with its own
# vcuda-server on the real driver; tests/mgmt/mgmt_qemu plays each VM's QEMU
# and guest (the VM path itself is ci/vm-test.sh's).
#
#   quota         each VM fills its quota on the GPU; one more allocation gets
#                 CUDA_ERROR_OUT_OF_MEMORY, and the other VM goes on allocating
#   usage         vcudactl session list shows each one's device memory
#   reclaim       the first VM's QEMU killed: its session is reclaimed, and NVML
#                 shows the GPU's used memory fall by its 4 GiB
#   whole GPUs    with two GPUs or more: a VM of two whole GPUs, its server on
#                 both, a gigabyte on the second counted there (server and NVML)
#
# Without a GPU: INVENTORY=1 runs the same on the CI stand-in with an
# inventory file and quotas of QUOTA_A/QUOTA_B (default 4G/8G; the stand-in
# holds its memory in host RAM, so give it 64M/128M on a small machine),
# without the NVML figures.
# The GPU machine has no libmicrohttpd (vcuda-mgmtd's metrics): carry the
# build machine's libmicrohttpd.so.12 and put its folder in LD_LIBRARY_PATH.
#   VCUDA_BUILD=build/release  QUOTA_A=4G QUOTA_B=8G
set -uo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir mgmt-gpu

B=${VCUDA_BUILD:-build/release}
QA=${QUOTA_A:-4G}
QB=${QUOTA_B:-8G}
CTL=$PWD/$B/bin/vcudactl
QEMU=$B/tests/mgmt_qemu
SOCK=$VC_TMP/mgmt.sock
RUN=$VC_TMP/run
export VCUDA_MGMT_SOCKET=$SOCK
trap 'for p in $(pgrep -f -- "--admin-socket $RUN/servers/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
      kill $(jobs -p) 2>/dev/null || true; rm -rf "$VC_TMP"' EXIT

pass=0
fail=0
check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "ok - $what"
	else
		fail=$((fail + 1))
		echo "not ok - $what"
	fi
}
bytes() { numfmt --from=iec "$1"; }
j() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

args=(--socket "$SOCK" --run-dir "$RUN" --db "$VC_TMP/mgmt.db" --server "$B/bin/vcuda-server" --admin-group root)
if [ -n "${INVENTORY:-}" ]; then
	echo '{"gpus": [{"uuid": "GPU-00000000-0000-4000-8000-0000000000a0", "name": "Fake GPU", "memory": "80G"}]}' \
		>"$VC_TMP/inv.json"
	args+=(--inventory "$VC_TMP/inv.json" --executor ci-standin)
	nvml_used() { echo 0; }
else
	# MiB used on GPU $1 (default 0), from NVML (what nvidia-smi reads)
	nvml_used() { nvidia-smi --id="${1:-0}" --query-gpu=memory.used --format=csv,noheader,nounits | tr -d ' '; }
fi
"$B/bin/vcuda-mgmtd" "${args[@]}" >"$VC_TMP/mgmtd.log" 2>&1 &
for _ in $(seq 200); do
	[ -S "$SOCK" ] && "$CTL" status >/dev/null 2>&1 && break
	sleep 0.05
done
"$CTL" gpu list | sed 's/^/    /'
"$CTL" vm add vma --gpu 0 --mem-quota "$QA" | sed 's/^/    /'
"$CTL" vm add vmb --gpu 0 --mem-quota "$QB" | sed 's/^/    /'

hold() { # VM LOG ALLOC...: a QEMU for VM holding its session after the allocations
	local vm=$1 log=$2 a=()
	shift 2
	for s in "$@"; do a+=(--alloc "$s"); done
	"$QEMU" --socket "$RUN/vms/$vm.sock" --name "$vm" --comm "$vm-job" "${a[@]}" --hold >"$log" 2>&1 &
	for _ in $(seq 600); do
		grep -q '^holding$' "$log" && return 0
		grep -qE '^welcome status=-' "$log" && break
		sleep 0.05
	done
	cat "$log"
	return 1
}

used0=$(nvml_used)
# Each VM takes its quota in 1 GiB allocations, then asks for 4 KiB more.
na=$(($(bytes "$QA") / (1 << 30)))
nb=$(($(bytes "$QB") / (1 << 30)))
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || { na=4 nb=8; }
ga=$(($(bytes "$QA") / na))
gb=$(($(bytes "$QB") / nb))
hold vma "$VC_TMP/a.log" $(for _ in $(seq "$na"); do echo "$ga"; done) 4096
sed 's/^/    a: /' "$VC_TMP/a.log"
check "vma: $QA in $na allocations fit its quota; the next 4 KiB gets CUDA_ERROR_OUT_OF_MEMORY (2)" \
	bash -c '[ "$(grep -c "^alloc bytes=$1 status=0$" "$0")" = "$2" ] && grep -q "^alloc bytes=4096 status=2$" "$0"' \
	"$VC_TMP/a.log" "$ga" "$na"
hold vmb "$VC_TMP/b.log" $(for _ in $(seq "$nb"); do echo "$gb"; done) 4096
sed 's/^/    b: /' "$VC_TMP/b.log"
check "vmb, while vma is full: $QB in $nb allocations work; the next 4 KiB gets CUDA_ERROR_OUT_OF_MEMORY (2)" \
	bash -c '[ "$(grep -c "^alloc bytes=$1 status=0$" "$0")" = "$2" ] && grep -q "^alloc bytes=4096 status=2$" "$0"' \
	"$VC_TMP/b.log" "$gb" "$nb"
used1=$(nvml_used)

"$CTL" session list | sed 's/^/    /'
"$CTL" --json session list >"$VC_TMP/s.json"
check "session list: vma uses $QA, vmb uses $QB" python3 - "$VC_TMP/s.json" "$(bytes "$QA")" "$(bytes "$QB")" <<'EOF'
import json, sys
s = {x["vm"]: x for x in json.load(open(sys.argv[1]))["sessions"]}
assert s["vma"]["mem_bytes"] == int(sys.argv[2]), s
assert s["vmb"]["mem_bytes"] == int(sys.argv[3]), s
EOF

kill -9 "$(pgrep -f -- "--socket $RUN/vms/vma.sock")"
t0=$(date +%s%N)
for _ in $(seq 100); do
	"$CTL" events --limit 50 | grep -q "of vma .*freed $(bytes "$QA") bytes" && break
	sleep 0.05
done
ms=$((($(date +%s%N) - t0) / 1000000))
"$CTL" events --limit 50 | grep 'vma' | sed 's/^/    /'
check "vma's QEMU killed: its session reclaimed in $ms ms, the event log says $QA freed" \
	bash -c '"$0" events --limit 50 | grep -q "of vma .*freed $1 bytes"' "$CTL" "$(bytes "$QA")"
sleep 0.5
used2=$(nvml_used)
if [ -z "${INVENTORY:-}" ]; then
	echo "    NVML, GPU 0 memory used: ${used0} MiB before, ${used1} MiB with both VMs full, ${used2} MiB after vma was killed"
	check "NVML: vma's $QA freed on the GPU (used fell by $((used1 - used2)) MiB)" \
		awk -v d=$((used1 - used2)) -v q=$(($(bytes "$QA") >> 20)) 'BEGIN { exit !(d >= q && d <= q + 1024) }'
fi
"$CTL" --json session list >"$VC_TMP/s2.json"
check "vmb's session is untouched: it still holds its $QB" \
	python3 - "$VC_TMP/s2.json" "$(bytes "$QB")" <<'EOF'
import json, sys
s = {x["vm"]: x for x in json.load(open(sys.argv[1]))["sessions"]}
assert "vma" not in s and s["vmb"]["mem_bytes"] == int(sys.argv[2]), s
EOF

# A VM of two whole GPUs, where the machine has two: its server on both GPUs
# of the real driver (CUDA_VISIBLE_DEVICES with two UUIDs), its memory on the
# second counted there, by the server and by NVML.
ngpu=$("$CTL" --json gpu list | j 'len(d["gpus"])')
if [ "$ngpu" -ge 2 ] && [ -z "${INVENTORY:-}" ]; then
	"$CTL" vm remove vma --force >/dev/null
	"$CTL" vm remove vmb --force >/dev/null
	for _ in $(seq 100); do pgrep -f -- "--admin-socket $RUN/servers/vm[ab]" >/dev/null || break; sleep 0.05; done
	"$CTL" vm add vmw --gpus 2 | sed 's/^/    /'
	u0=$(nvml_used)
	u1=$(nvml_used 1)
	"$QEMU" --socket "$RUN/vms/vmw.sock" --name vmw --comm ddp --device 1 --alloc $((1 << 30)) --hold \
		>"$VC_TMP/w.log" 2>&1 &
	for _ in $(seq 600); do grep -qE '^(holding|welcome status=-)' "$VC_TMP/w.log" && break; sleep 0.05; done
	sed 's/^/    w: /' "$VC_TMP/w.log"
	sleep 0.5
	d0=$(($(nvml_used) - u0))
	d1=$(($(nvml_used 1) - u1))
	byd=$("$CTL" --json vm show vmw | j 'd["vm"]["live"]["mem_used_by_device"]')
	echo "    NVML: GPU 0 +$d0 MiB, GPU 1 +$d1 MiB; the server counts $byd"
	check "vmw: two whole GPUs, its guest sees 2 devices, 1 GiB on the second counted there ($byd)" \
		bash -c 'grep -q "devices=2" "$0" && grep -q "^alloc bytes=1073741824 status=0$" "$0" && [ "$1" = "[0, 1073741824]" ]' \
		"$VC_TMP/w.log" "$byd"
	check "NVML: the gigabyte is on GPU 1 (+$d1 MiB), GPU 0 has only the context (+$d0 MiB)" \
		awk -v a="$d0" -v b="$d1" 'BEGIN { exit !(b >= 1024 && b <= 2048 && a < 1024) }'
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
