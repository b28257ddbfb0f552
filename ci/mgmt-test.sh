#!/usr/bin/env bash
# ci/mgmt-test.sh [VARIANT]: vcuda-mgmtd and vcudactl end to end, without a
# GPU: an inventory file with two fake GPUs, vcuda-server with the CI
# stand-in, and tests/mgmt/mgmt_qemu in QEMU's place on the VM sockets.
#
#   inventory     the daemon says it uses one; NVML missing is said clearly
#   place         a VM added without a GPU goes where the policy says (and why)
#   share         two running VMs on one GPU, each with its own server
#   quota         an allocation past the VM's memory quota: CUDA_ERROR_OUT_OF_MEMORY;
#                 a quota no GPU can promise: refused at "vm add"; quotas changed live
#   drain         a drained (or unhealthy) GPU takes no new VMs; a VM on it moves
#                 on its next open
#   reclaim       a killed guest process's session is reclaimed within 2 s, an idle
#                 one after its timeout; the event log says what was freed
#   kill -9       the daemon killed: state intact, servers re-attached
#   bad requests  malformed, oversized, half-sent, silent and unauthorized requests
#   exit codes    0, 1, 2, 3, 4 as documented
#   metrics       /metrics on a loopback port: promtool check metrics on live scrapes;
#                 quotas, memory used, sessions, reclaims and refusals as they happened
#   whole GPUs    a VM of several GPUs: placed on free GPUs whole, refusals, its server
#                 on both (two stand-in devices), memory by GPU, restart, drain, back to one
#
# With MGMT_INSTALLED=1 the binaries are the installed ones (/usr/bin) and the
# daemon is started with its systemd unit's ExecStart (ci/unit-exec.py), the
# test's options in \$VCUDA_MGMTD_OPTS; the test's helpers still come from
# build/VARIANT.
# Prints "ok - ..." per check and "N passed, N failed"; exits non-zero on failure.
set -uo pipefail
cd "$(dirname "$0")/.."

VARIANT=${1:-${VARIANT:-release}}
B=build/$VARIANT
. ci/lib.sh
ci_tmpdir mgmt
chmod 755 "$VC_TMP" # the unprivileged client must reach the socket

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
SAN=""
[ "$VARIANT" = asan ] && SAN=", ASan/LSan/UBSan quiet"
MGMTD=$B/bin/vcuda-mgmtd
CTL=$PWD/$B/bin/vcudactl
SERVER=$B/bin/vcuda-server
SERVER_OPT=(--server "$SERVER")
UNIT=${MGMT_UNIT:-/lib/systemd/system/vcuda-mgmtd.service}
if [ -n "${MGMT_INSTALLED:-}" ]; then
	MGMTD=/usr/bin/vcuda-mgmtd
	CTL=/usr/bin/vcudactl
	SERVER=/usr/bin/vcuda-server
	SERVER_OPT=() # the unit's daemon finds vcuda-server next to itself
	[ -f "$UNIT" ] || { echo "missing $UNIT: install the vcuda-host package first"; exit 1; }
fi
QEMU=$B/tests/mgmt_qemu
SOCK=$VC_TMP/mgmt.sock
RUN=$VC_TMP/run
INV=$VC_TMP/inventory.json
export VCUDA_MGMT_SOCKET=$SOCK
# Servers outlive the daemon by design: a run that stops half-way must not
# leave this run's servers behind (they are found by this run's directory).
trap 'for p in $(pgrep -f -- "--admin-socket $RUN/servers/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
      kill $(jobs -p) 2>/dev/null || true; rm -rf "$VC_TMP"' EXIT
GPU0=GPU-00000000-0000-4000-8000-0000000000a0
GPU1=GPU-00000000-0000-4000-8000-0000000000a1
GiB=$((1 << 30))
MiB=$((1 << 20))

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
FAILED=()
bad() { fail=$((fail + 1)); FAILED+=("not ok - $*"); echo "not ok - $*"; }
check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

for f in "$MGMTD" "$CTL" "$QEMU" "$SERVER"; do
	[ -x "$f" ] || { echo "missing $f: run 'make VARIANT=$VARIANT' first"; exit 1; }
done

inventory() { # HEALTH_OF_GPU1
	cat >"$INV" <<EOF
{"gpus": [
  {"uuid": "$GPU0", "name": "Fake H100 80GB", "memory": "80G", "pci_bus_id": "00000000:17:00.0"},
  {"uuid": "$GPU1", "name": "Fake H100 40GB", "memory": "40G", "pci_bus_id": "00000000:65:00.0",
   "health": "$1", "reason": "test: marked $1"}
]}
EOF
}

# jq-like access with python3: j 'd["vm"]["gpu_index"]' < reply.json
j() { python3 -c 'import json,sys; d=json.load(sys.stdin); v=eval(sys.argv[1]); print(v if not isinstance(v,(dict,list)) else json.dumps(v))' "$1"; }

DLOG=$VC_TMP/mgmtd.log
MPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
METRICS=http://127.0.0.1:$MPORT/metrics
start_daemon() { # [EXTRA ARGS]
	local args=(--socket "$SOCK" --run-dir "$RUN" --db "$VC_TMP/db/mgmt.db" --inventory "$INV"
		"${SERVER_OPT[@]}" --executor ci-standin --socket-mode 0666 --admin-group users
		--metrics-listen "$MPORT" "$@")
	if [ -n "${MGMT_INSTALLED:-}" ]; then
		# As systemd would run it: the unit's ExecStart, our options in its variable.
		local cmd=()
		mapfile -d '' cmd < <(VCUDA_MGMTD_OPTS="${args[*]}" python3 ci/unit-exec.py "$UNIT")
		[ "${cmd[0]}" = "$MGMTD" ] || { echo "the unit runs ${cmd[0]}, not $MGMTD"; return 1; }
		"${cmd[@]}" >>"$DLOG" 2>&1 &
	else
		"$MGMTD" "${args[@]}" >>"$DLOG" 2>&1 &
	fi
	DPID=$!
	for _ in $(seq 200); do
		[ -S "$SOCK" ] && "$CTL" status >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.025
	done
	echo "vcuda-mgmtd did not start:"
	tail -20 "$DLOG"
	return 1
}

# A QEMU for VM $1 in the background, holding its sessions; extra args follow.
QPIDS=()
qemu_hold() { # VM LOG ARGS...
	local vm=$1 log=$2
	shift 2
	"$QEMU" --socket "$RUN/vms/$vm.sock" --name "$vm" "$@" --hold >"$log" 2>&1 &
	QPIDS+=($!)
	for _ in $(seq 400); do
		grep -qE '^(holding|guest pid=[0-9]+ ready)$' "$log" && return 0
		grep -qE '^welcome status=-' "$log" && break
		sleep 0.025
	done
	echo "mgmt_qemu for $vm did not get its sessions:"
	cat "$log"
	return 1
}

event_matches() { # PATTERN: an event in the last 200 matches
	"$CTL" events --limit 200 | grep -qE "$1"
}

wait_event() { # PATTERN TIMEOUT_MS: prints the ms it took
	local t0 now
	t0=$(date +%s%N)
	while :; do
		if event_matches "$1"; then
			now=$(date +%s%N)
			echo $(((now - t0) / 1000000))
			return 0
		fi
		now=$(date +%s%N)
		[ $(((now - t0) / 1000000)) -lt "$2" ] || return 1
		sleep 0.02
	done
}

# ---- metrics: a scrape, checked by promtool; values by exact series -------------------------
scrape() { # NAME: the scrape into $VC_TMP/NAME.prom, checked by promtool
	curl -sf --max-time 10 "$METRICS" >"$VC_TMP/$1.prom" || { echo "scrape of $METRICS failed"; return 1; }
	promtool check metrics <"$VC_TMP/$1.prom" || return 1
}
metric() { # NAME SERIES: the value of SERIES (e.g. 'vcuda_vm_sessions{vm="vm1"}') in scrape NAME
	awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "absent" }' "$VC_TMP/$1.prom"
}
metrics_are() { # NAME SERIES VALUE [SERIES VALUE]...: every SERIES has VALUE, else says which not
	local f=$1 rc=0 got
	shift
	while [ $# -ge 2 ]; do
		got=$(metric "$f" "$1")
		[ "$got" = "$2" ] || { echo "    $1 is $got, expected $2"; rc=1; }
		shift 2
	done
	return $rc
}

echo "vcuda mgmt test ($VARIANT${MGMT_INSTALLED:+, installed binaries and unit}): $(date -u +%FT%TZ)"
inventory healthy

# ---- without NVML ---------------------------------------------------------------------
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
	out=$("$MGMTD" --socket "$VC_TMP/x.sock" --run-dir "$VC_TMP/xrun" --db "$VC_TMP/x.db" 2>&1)
	rc=$?
	check "no NVML, no inventory: refuses to start, says NVML is missing and what to do (rc $rc)" \
		bash -c '[ '$rc' -eq 1 ] && grep -q "NVML not available" <<<"$0" && grep -q -- "--inventory FILE" <<<"$0"' "$out"
fi

# ---- NVML, through a stand-in library with NVIDIA's entry points and layouts ---------------------
if [ -f "$B/tests/libfake_nvml.so" ]; then
	N=$VC_TMP/nvml
	"$MGMTD" --socket "$N.sock" --run-dir "$N-run" --db "$N.db" --nvml-lib "$PWD/$B/tests/libfake_nvml.so" \
		"${SERVER_OPT[@]}" >"$N.log" 2>&1 &
	npid=$!
	for _ in $(seq 200); do [ -S "$N.sock" ] && break; sleep 0.025; done
	"$CTL" --socket "$N.sock" gpu list >"$N.gpus"
	sed 's/^/    /' "$N.gpus"
	"$CTL" --socket "$N.sock" --json vm add nv1 --mem-quota 8G >"$N.add"
	check "NVML: two GPUs with UUID, name, memory and bus id; the one with a pending row remap is unhealthy" \
		bash -c 'grep -q "^0  *GPU-fa4e0000-0000-4000-8000-000000000000  NVIDIA H100 80GB HBM3 (fake NVML)  79.6 GiB .*healthy$" "$0" &&
			 grep -q "^1  *GPU-fa4e0000-0000-4000-8000-000000000001 .*133.9 GiB .*unhealthy (row remapping pending: reset the GPU)$" "$0" &&
			 ! grep -q "inventory" "$0" && grep -q "GPUs from NVML 13.580.00.fake (driver 580.00.fake)" "$1"' "$N.gpus" "$N.log"
	check "NVML: a new VM avoids the unhealthy GPU" test "$(j 'd["vm"]["gpu_index"]' <"$N.add")" = 0
	check "NVML: each GPU's NUMA node (nvmlDeviceGetNumaNodeId)" \
		test "$("$CTL" --socket "$N.sock" --json gpu list | j '[g["numa_node"] for g in d["gpus"]]')" = "[0, 1]"
	kill -TERM "$npid"
	wait "$npid"
	check "NVML: the daemon exits cleanly (rc $?$SAN)" test $? -eq 0
fi

start_daemon || exit 1
check "the daemon says its GPUs come from an inventory file" grep -q "GPUs from the inventory file .* NOT from NVML" "$DLOG"
"$CTL" status >"$VC_TMP/status.txt"
check "vcudactl status names the inventory file" grep -q "GPUs from:.*inventory file $INV" "$VC_TMP/status.txt"
"$CTL" gpu list >"$VC_TMP/gpus.txt"
check "gpu list: two GPUs, flagged as an inventory" \
	bash -c 'grep -c "Fake H100" "$0" | grep -qx 2 && grep -q "inventory file, not NVML" "$0"' "$VC_TMP/gpus.txt"
cat "$VC_TMP/gpus.txt" | sed 's/^/    /'
check "metrics: the daemon says it serves $METRICS" grep -q "metrics on http://127.0.0.1:$MPORT/metrics$" "$DLOG"
check "metrics: a live scrape passes promtool check metrics" scrape start
check "metrics: both GPUs with their memory, none promised yet" metrics_are start \
	"vcuda_gpu_memory_total_bytes{gpu=\"$GPU0\"}" $((80 * GiB)) "vcuda_gpu_memory_total_bytes{gpu=\"$GPU1\"}" $((40 * GiB)) \
	"vcuda_gpu_memory_quota_bytes{gpu=\"$GPU0\"}" 0 "vcuda_gpu_healthy{gpu=\"$GPU1\"}" 1
check "metrics: only GET and HEAD of /metrics (404 elsewhere, 405 for POST)" \
	test "$(curl -s -o /dev/null -w '%{http_code}' "${METRICS%/metrics}/x") $(curl -s -X POST -o /dev/null -w '%{http_code}' "$METRICS")" = "404 405"

# ---- exit codes ---------------------------------------------------------------------------
"$CTL" vm >/dev/null 2>&1
check "usage error: exit 2" test $? -eq 2
"$CTL" --socket "$VC_TMP/nowhere.sock" vm list 2>"$VC_TMP/err.txt"
rc=$?
check "daemon unreachable: exit 3, says how to start it" \
	bash -c '[ '$rc' -eq 3 ] && grep -q "Start it" "$0"' "$VC_TMP/err.txt"
"$CTL" vm show nosuch 2>"$VC_TMP/err.txt"
rc=$?
check "refused by the daemon: exit 1 with its reason" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "no VM nosuch" "$0"' "$VC_TMP/err.txt"

# ---- add and place ------------------------------------------------------------------------
"$CTL" vm add vm1 --mem-quota 20G --weight 100 | sed 's/^/    /'
"$CTL" vm add vm2 --mem-quota 20G | sed 's/^/    /'
"$CTL" vm add vm3 --mem-quota 8G | sed 's/^/    /'
idx() { "$CTL" --json vm show "$1" | j 'd["vm"]["gpu_index"]'; }
check "place: vm1 (20G) on gpu 0, the most unpromised memory (80G against 40G)" test "$(idx vm1)" = 0
check "place: vm2 (20G) on gpu 0 too (60G against 40G): shared" test "$(idx vm2)" = 0
check "place: vm3 on gpu 1: equal unpromised memory (40G), least total weight" \
	bash -c '[ "$0" = 1 ] && "$1" events --limit 5 | grep -q "VM vm3 added.*least total weight"' "$(idx vm3)" "$CTL"
"$CTL" vm add vmbig --mem-quota 100G 2>"$VC_TMP/err.txt"
rc=$?
check "a quota no GPU can promise is refused at add (rc $rc), saying what to do" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "no GPU has 100 GiB" "$0" && grep -q -- "--mem-quota" "$0"' "$VC_TMP/err.txt"
"$CTL" vm add vm1 2>/dev/null
check "adding an existing VM is refused" test $? -eq 1
check "each VM has its socket" test -S "$RUN/vms/vm1.sock" -a -S "$RUN/vms/vm3.sock"

# ---- share: two running VMs on one GPU --------------------------------------------------------
qemu_hold vm1 "$VC_TMP/q1.log" --alloc $((64 * MiB)) --comm trainer && qemu_hold vm2 "$VC_TMP/q2.log" --alloc $((32 * MiB)) --comm infer
"$CTL" --json session list >"$VC_TMP/sessions.json"
"$CTL" session list | sed 's/^/    /'
check "share: vm1 and vm2 both run on gpu 0, each with its own server and sessions" python3 - "$VC_TMP/sessions.json" "$GPU0" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = {x["vm"]: x for x in d["sessions"]}
assert set(s) == {"vm1", "vm2"}, s
assert all(x["gpu"] == sys.argv[2] for x in s.values())
assert s["vm1"]["mem_bytes"] == 64 << 20 and s["vm2"]["mem_bytes"] == 32 << 20
assert s["vm1"]["comm"] == "trainer"
EOF
p1=$("$CTL" --json vm show vm1 | j 'd["vm"]["server_pid"]')
p2=$("$CTL" --json vm show vm2 | j 'd["vm"]["server_pid"]')
check "share: two servers (pids $p1, $p2), both started with --gpu $GPU0" \
	bash -c '[ "$0" != "$1" ] && tr "\0" " " </proc/$0/cmdline | grep -q -- "--gpu $2" && tr "\0" " " </proc/$1/cmdline | grep -q -- "--gpu $2"' "$p1" "$p2" "$GPU0"

# ---- quotas ----------------------------------------------------------------------------------
"$CTL" vm add vmq --gpu 1 --mem-quota 64M --weight 50 >/dev/null
"$QEMU" --socket "$RUN/vms/vmq.sock" --name vmq --alloc $((32 * MiB)) --alloc $((32 * MiB)) --alloc 4096 >"$VC_TMP/qq.log" 2>&1
sed 's/^/    /' "$VC_TMP/qq.log"
check "quota: 32M + 32M fit the 64M quota, the next 4 KiB gets CUDA_ERROR_OUT_OF_MEMORY (2)" \
	bash -c 'grep -c "^alloc bytes=33554432 status=0$" "$0" | grep -qx 2 && grep -q "^alloc bytes=4096 status=2$" "$0"' "$VC_TMP/qq.log"
qemu_hold vmq "$VC_TMP/qq2.log" --alloc $((48 * MiB))
"$CTL" vm set vmq --mem-quota 128M --weight 70 | sed 's/^/    /'
"$CTL" --json vm show vmq >"$VC_TMP/vmq.json"
live=$(j '[d["vm"]["live"]["mem_quota"], d["vm"]["live"]["weight"], d["vm"]["mem_quota"], d["vm"]["weight"]]' <"$VC_TMP/vmq.json")
check "quota changed live: the running server now has 128M and weight 70 ($live)" \
	test "$live" = "[134217728, 70, 134217728, 70]"
"$CTL" vm set vmq --mem-quota 60G 2>"$VC_TMP/err.txt"
rc=$?
check "a quota its GPU cannot promise is refused at set (rc $rc)" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "gpu 1 has" "$0"' "$VC_TMP/err.txt"
check "metrics: a live scrape with three running VMs passes promtool check metrics" scrape quota
grep -E '^vcuda_(vm_memory_used_bytes|vm_sessions|gpu_memory_used_bytes|gpu_memory_quota_bytes)\{|resource="memory"\} [1-9]' \
	"$VC_TMP/quota.prom" | sed 's/^/    /'
check "metrics: vmq's quota (128M, set live), weight, memory held (48M), one session, its refused 4 KiB" \
	metrics_are quota 'vcuda_vm_memory_quota_bytes{vm="vmq"}' $((128 * MiB)) 'vcuda_vm_weight{vm="vmq"}' 70 \
	'vcuda_vm_memory_used_bytes{vm="vmq"}' $((48 * MiB)) 'vcuda_vm_sessions{vm="vmq"}' 1 \
	'vcuda_vm_quota_refusals_total{vm="vmq",resource="memory"}' 1 'vcuda_vm_server_up{vm="vmq"}' 1 \
	'vcuda_vm_memory_used_bytes{vm="vm1"}' $((64 * MiB)) 'vcuda_vm_memory_used_bytes{vm="vm2"}' $((32 * MiB))
"$CTL" --json vm list >"$VC_TMP/vms.json"
check "metrics: per GPU, quota promised = the sum of its VMs' quotas, memory used = the sum of theirs" \
	python3 - "$VC_TMP/vms.json" "$VC_TMP/quota.prom" "$GPU0" "$GPU1" <<'EOF2'
import json, re, sys
vms = json.load(open(sys.argv[1]))["vms"]
m = {}
for line in open(sys.argv[2]):
    if not line.startswith("#"):
        k, v = line.rsplit(" ", 1)
        m[k] = float(v)
for g in sys.argv[3:]:
    mine = [v for v in vms if v["gpu"] == g]
    q = sum(v["mem_quota"] for v in mine)
    u = sum(m['vcuda_vm_memory_used_bytes{vm="%s"}' % v["name"]] for v in mine)
    assert m['vcuda_gpu_memory_quota_bytes{gpu="%s"}' % g] == q, (g, q)
    assert m['vcuda_gpu_memory_used_bytes{gpu="%s"}' % g] == u, (g, u)
    assert m['vcuda_gpu_vms{gpu="%s"}' % g] == len(mine), g
    print("    gpu %s: %d VMs, %d bytes promised, %d used" % (g, len(mine), q, u))
EOF2

# ---- drain ------------------------------------------------------------------------------------
"$CTL" gpu drain 0 | sed 's/^/    /'
"$CTL" vm add vm4 --mem-quota 1G >/dev/null
check "drain: a new VM goes to gpu 1 while gpu 0 is drained" test "$(idx vm4)" = 1
"$CTL" vm add vm5 --gpu 0 2>"$VC_TMP/err.txt"
check "drain: asking for the drained GPU is refused, saying how to undrain" grep -q "undrain" "$VC_TMP/err.txt"
old=$p1
kill "${QPIDS[0]}" # vm1's QEMU goes away; its next open moves it
sleep 0.3
"$QEMU" --socket "$RUN/vms/vm1.sock" --name vm1 --alloc $MiB >"$VC_TMP/q1b.log" 2>&1
new=$("$CTL" --json vm show vm1 | j 'd["vm"]["server_pid"]')
check "drain: vm1 moved to gpu 1 on its next open, with a new server (pid $old -> $new)" \
	bash -c '[ "$0" = 1 ] && [ "$1" != "$2" ] && grep -q "^alloc bytes=1048576 status=0$" "$3" && "$4" events --limit 20 | grep -q "VM vm1 moved from gpu 0"' \
	"$(idx vm1)" "$old" "$new" "$VC_TMP/q1b.log" "$CTL"
check "drain: vm2 stays on gpu 0 while its QEMU stays" test "$(idx vm2)" = 0
inventory unhealthy
"$CTL" gpu rescan >/dev/null
"$CTL" vm add vm6 --mem-quota 1G 2>"$VC_TMP/err.txt"
rc=$?
check "unhealthy: rescan marks gpu 1 unhealthy; with gpu 0 drained no GPU takes a VM (rc $rc)" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "drained or unhealthy" "$0" && "$1" events --limit 10 | grep -q "gpu.unhealthy"' "$VC_TMP/err.txt" "$CTL"
inventory healthy
"$CTL" gpu rescan >/dev/null
"$CTL" gpu undrain 0 >/dev/null
"$CTL" gpu list | sed 's/^/    /'

# ---- reclaim -----------------------------------------------------------------------------------
qemu_hold vm3 "$VC_TMP/q3.log" --guest --alloc $((256 * MiB)) --comm python3
g=$(sed -n 's/^guest pid=\([0-9]*\) ready$/\1/p' "$VC_TMP/q3.log")
kill -9 "$g"
if ms=$(wait_event "reclaimed session [0-9]+ of vm3 \\(guest pid $g python3\\): client exit, freed 268435456 bytes" 2000); then
	ok "reclaim: guest process $g killed; reclaimed with its 256 MiB in $ms ms (limit 2000)"
	"$CTL" events --limit 200 | grep "guest pid $g" | sed 's/^/    /'
else
	bad "reclaim: no 'reclaimed session ... freed 268435456 bytes' event for guest pid $g within 2 s"
	tail -20 "$DLOG"
fi
"$CTL" vm add vmi --mem-quota 1G --idle-timeout 1 >/dev/null
qemu_hold vmi "$VC_TMP/qi.log" --alloc $((8 * MiB)) --comm idler
if ms=$(wait_event "reclaimed session [0-9]+ of vmi .*idle past its timeout, freed 8388608 bytes" 5000); then
	ok "reclaim: a session idle past its 1 s timeout reclaimed ($ms ms after it started idling)"
else
	bad "reclaim: the idle session of vmi was not reclaimed within 5 s"
fi
check "metrics: a live scrape after the reclaims passes promtool check metrics" scrape reclaim
check "metrics: vm3's killed guest reclaimed (client-exit, 256M), vmi's idle one (8M), vm3's session gone" \
	metrics_are reclaim 'vcuda_vm_sessions_closed_total{vm="vm3",reason="client-exit"}' 1 \
	'vcuda_vm_reclaimed_bytes_total{vm="vm3"}' $((256 * MiB)) 'vcuda_vm_sessions_closed_total{vm="vmi",reason="idle"}' 1 \
	'vcuda_vm_reclaimed_bytes_total{vm="vmi"}' $((8 * MiB)) 'vcuda_vm_sessions{vm="vm3"}' 0 \
	'vcuda_vm_memory_used_bytes{vm="vm3"}' 0 'vcuda_vm_sessions_opened_total{vm="vm3"}' 1

# ---- bad requests ------------------------------------------------------------------------------
python3 - "$SOCK" >"$VC_TMP/bad.txt" 2>&1 <<'EOF'
import json, socket, sys, time
path = sys.argv[1]

def conn():
    for _ in range(500):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect(path)
            return s
        except BlockingIOError:  # the backlog is full for a moment
            s.close()
            time.sleep(0.01)
    raise OSError("cannot connect")

def ask(raw):
    s = conn()
    s.sendall(raw)
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(65536)
        if not b:
            break
        buf += b
    s.close()
    return json.loads(buf)

def expect(raw, code, needle):
    r = ask(raw)
    assert r["ok"] is False and r["code"] == code and needle in r["error"], (raw[:60], r)
    print("refused:", code, "-", r["error"][:110])

# a silent client first: it must not hold anyone up
silent = conn()
half = conn()
half.sendall(b'{"v":1,"op":"vm.li')
expect(b'{"v":1,"op":"vm.list"\n', "bad-request", "malformed JSON")
expect(b'\x00\xff\xfe garbage\n', "bad-request", "malformed JSON")
expect(b'[1,2]\n', "bad-request", "")
expect(b'{"op":"vm.list"}\n', "bad-request", 'missing field "v"')
expect(b'{"v":99,"op":"vm.list"}\n', "unsupported-version", "version 99")
expect(b'{"v":1,"op":"vm.explode"}\n', "unknown-op", "unknown operation")
expect(b'{"v":1,"op":"vm.add","name":"x","weight":"heavy"}\n', "bad-request", "weight")
expect(b'{"v":1,"op":"vm.add","name":"../../etc"}\n', "bad-request", "invalid VM name")
expect(b'{"v":1,"op":"vm.list","id":7,"id":8}\n', "bad-request", "duplicate")
# several requests in one write, answered in order
s = conn()
s.sendall(b'{"v":1,"op":"status","id":1}\n{"v":1,"op":"vm.list","id":2}\n')
got = b""
while got.count(b"\n") < 2:
    got += s.recv(65536)
ids = [json.loads(l)["id"] for l in got.splitlines()]
assert ids == [1, 2], ids
s.close()
print("pipelined: 2 requests, 2 replies in order")
# an oversized line: an error, then the connection is closed
s = conn()
try:
    s.sendall(b"{" + b" " * (70 << 10))
except OSError:
    pass
buf = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        buf += b
except OSError:
    pass
r = json.loads(buf.splitlines()[0])
assert r["ok"] is False and "too long" in r["error"], r
print("oversized: refused -", r["error"])
# half a request, then gone
half.close()
# hundreds of junk lines on one connection
s = conn()
s.sendall(b"not json\n" * 500)
n = 0
buf = b""
while n < 500:
    b = s.recv(65536)
    if not b:
        break
    buf += b
    n = buf.count(b"\n")
assert n == 500, n
s.close()
print("junk: 500 lines, 500 errors")
# more clients than the daemon serves at once: the extra ones are told so
many = [conn() for _ in range(140)]
busy = 0
for c in many:
    c.settimeout(0.3)
    try:
        if b"too many clients" in c.recv(4096):
            busy += 1
    except OSError:
        pass
for c in many:
    c.close()
assert busy >= 10, busy
print("flood: 140 more connections, %d told to retry" % busy)
silent.close()
EOF
rc=$?
sed 's/^/    /' "$VC_TMP/bad.txt"
check "malformed, oversized, half-sent, pipelined, silent and surplus clients: clear errors, no harm" \
	bash -c '[ '$rc' -eq 0 ] && kill -0 '$DPID' && "$0" status >/dev/null' "$CTL"
if [ "$(id -u)" -eq 0 ]; then
	cp "$CTL" "$VC_TMP/vcudactl"
	NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	"${NOBODY[@]}" "$VC_TMP/vcudactl" vm add intruder 2>"$VC_TMP/err.txt"
	rc=$?
	sed 's/^/    /' "$VC_TMP/err.txt"
	check "unauthorized: uid 65534 cannot add a VM: exit 4, the error names the admin group" \
		bash -c '[ '$rc' -eq 4 ] && grep -q "permission denied" "$0" && grep -q "group users" "$0"' "$VC_TMP/err.txt"
	"${NOBODY[@]}" "$VC_TMP/vcudactl" gpu drain 1 >/dev/null 2>&1
	check "unauthorized: nor drain a GPU" test $? -eq 4
	"${NOBODY[@]}" "$VC_TMP/vcudactl" vm list >/dev/null
	check "unauthorized: uid 65534 may read" test $? -eq 0
	setpriv --reuid=65534 --regid=65534 --groups=100 "$VC_TMP/vcudactl" vm add delegated --mem-quota 1G >/dev/null
	check "a member of the admin group (users) may change state" test $? -eq 0
else
	echo "skip - unauthorized-user checks need root (setpriv to uid 65534)"
fi
check "the refusals are in the daemon's log, with who asked" grep -q "refused a request from uid 0" "$DLOG"
python3 - "$MPORT" "$CTL" >"$VC_TMP/httpbad.txt" 2>&1 <<'EOF2'
import socket, subprocess, sys, time
port, ctl = int(sys.argv[1]), sys.argv[2]
def conn():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s
# idle and half-sent connections, past the endpoint's limits (16, 4 per address)
held = [conn() for _ in range(24)]
for s in held[::2]:
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
t0 = time.time()
r = subprocess.run([ctl, "status"], capture_output=True, timeout=10)
assert r.returncode == 0, r
print("vcudactl status answered in %.0f ms with 24 HTTP connections held" % ((time.time() - t0) * 1000))
for s in held:
    s.close()
time.sleep(0.2)
# a request line past the connection's 64 KiB
s = conn()
try:
    s.sendall(b"GET /metrics?" + b"a" * (128 << 10) + b" HTTP/1.1\r\n\r\n")
    reply = s.recv(4096)
except OSError:
    reply = b"(closed)"
print("oversized request:", reply.split(b"\r\n")[0].decode(errors="replace"))
assert reply and not reply.startswith(b"HTTP/1.1 200"), reply[:80]
EOF2
rc=$?
sed 's/^/    /' "$VC_TMP/httpbad.txt"
check "metrics: held, half-sent and oversized HTTP requests do not hold up the daemon or get metrics" \
	bash -c '[ '$rc' -eq 0 ] && kill -0 '$DPID
check "metrics: a live scrape after the bad requests passes promtool check metrics" scrape refusals
grep '^vcuda_mgmt_requests_total' "$VC_TMP/refusals.prom" | grep -v ' 0$' | sed 's/^/    /'
check "metrics: management refusals counted by code (503 junk lines as bad-request, an unknown op, a bad version)" \
	python3 -c 'import sys; m = dict(l.rsplit(" ", 1) for l in open(sys.argv[1]) if l.startswith("vcuda_mgmt_requests_total"));
c = lambda k: float(m["vcuda_mgmt_requests_total{code=\"%s\"}" % k]);
assert c("bad-request") >= 503 and c("unknown-op") >= 1 and c("unsupported-version") >= 1 and c("not-found") >= 1 and c("ok") > 10, m
assert sys.argv[2] != "0" or c("permission-denied") >= 2, m' "$VC_TMP/refusals.prom" "$(id -u)"

# ---- restart --------------------------------------------------------------------------------------
servers_before=$(pgrep -f -- "--admin-socket $RUN/servers/" | sort | tr '\n' ' ')
kill -TERM "$DPID"
wait "$DPID"
rc=$?
check "SIGTERM: the daemon exits cleanly (rc $rc$SAN), leaving the servers running" \
	test $rc -eq 0 -a "$servers_before" = "$(pgrep -f -- "--admin-socket $RUN/servers/" | sort | tr '\n' ' ')"
start_daemon || exit 1
check "restart: every running server re-attached" \
	test "$("$CTL" events --limit 50 | grep -c server.reattached)" -eq "$("$CTL" --json vm list | j 'sum(1 for v in d["vms"] if v["state"] == "running")')"

# ---- kill -9 of the daemon ----------------------------------------------------------------------
"$CTL" vm list >"$VC_TMP/before.txt"
"$CTL" gpu list >"$VC_TMP/gpus-before.txt"
last=$("$CTL" --json events --limit 1 | j 'd["events"][-1]["id"]')
servers_before=$(pgrep -f -- "--admin-socket $RUN/servers/" | sort | tr '\n' ' ')
kill -9 "$DPID"
wait "$DPID" 2>/dev/null
start_daemon --stop-servers-on-exit || exit 1
"$CTL" vm list >"$VC_TMP/after.txt"
"$CTL" gpu list >"$VC_TMP/gpus-after.txt"
servers_after=$(pgrep -f -- "--admin-socket $RUN/servers/" | sort | tr '\n' ' ')
check "kill -9: the VM table is intact" diff "$VC_TMP/before.txt" "$VC_TMP/after.txt"
check "kill -9: GPUs and drain flags are intact" diff "$VC_TMP/gpus-before.txt" "$VC_TMP/gpus-after.txt"
check "kill -9: the event log is intact (event $last still there)" \
	bash -c '"$0" --json events --since $(($1 - 1)) --limit 1 | grep -q "\"id\": $1"' "$CTL" "$last"
check "kill -9: the servers outlived it and were re-attached ($servers_after)" \
	bash -c '[ "$0" = "$1" ] && [ -n "$0" ] && "$2" events --limit 20 | grep -q server.reattached' "$servers_before" "$servers_after" "$CTL"
"$CTL" session list | sed 's/^/    /'
"$CTL" --json session list | python3 -c 'import json,sys; d=json.load(sys.stdin); assert {s["vm"] for s in d["sessions"]} >= {"vm2","vmq"}, d'
check "kill -9: the running VMs' sessions are still served" test $? -eq 0
kill "${QPIDS[1]}" # vm2's QEMU goes: its session ends, seen by the new daemon
check "kill -9: events of re-attached servers are still logged" \
	bash -c 'wait_ms=$(for i in $(seq 100); do "$0" events --limit 20 | grep -q "closed session [0-9]* of vm2 (guest pid [0-9]* infer)" && { echo ok; break; }; sleep 0.02; done); [ "$wait_ms" = ok ]' "$CTL"
"$CTL" vm add vm7 --mem-quota 1G >/dev/null
check "kill -9: the daemon changes state again afterwards" test $? -eq 0

# ---- a server whose VM the database no longer has -------------------------------------------------
# As if the daemon had been killed between committing "vm remove" and stopping the server.
pi=$("$CTL" --json vm show vmi | j 'd["vm"]["server_pid"]')
kill -9 "$DPID"
wait "$DPID" 2>/dev/null
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM vms WHERE name=?", ("vmi",)); c.commit()' "$VC_TMP/db/mgmt.db"
start_daemon --stop-servers-on-exit || exit 1
for _ in $(seq 200); do kill -0 "$pi" 2>/dev/null || break; sleep 0.025; done
check "orphan: the server of a VM missing from the database is stopped at start (pid $pi)" \
	bash -c '! kill -0 '$pi' 2>/dev/null && "$0" events --limit 20 | grep -q "server.orphan .*vcuda-server pid '$pi' serves vmi"' "$CTL"

# ---- remove ---------------------------------------------------------------------------------------
"$CTL" vm remove vmq 2>"$VC_TMP/err.txt"
rc=$?
check "remove: a running VM needs --force (rc $rc)" bash -c '[ '$rc' -eq 1 ] && grep -q -- "--force" "$0"' "$VC_TMP/err.txt"
pq=$("$CTL" --json vm show vmq | j 'd["vm"]["server_pid"]')
"$CTL" vm remove vmq --force >/dev/null
for _ in $(seq 200); do kill -0 "$pq" 2>/dev/null || break; sleep 0.025; done
check "remove --force: its server stopped, its socket gone" \
	bash -c '! kill -0 '$pq' 2>/dev/null && [ ! -e "$0" ] && ! "$1" vm show vmq 2>/dev/null' "$RUN/vms/vmq.sock" "$CTL"

# ---- stop ---------------------------------------------------------------------------------------------
for p in "${QPIDS[@]}"; do kill "$p" 2>/dev/null; done
kill -TERM "$DPID"
wait "$DPID"
rc=$?
check "SIGTERM: the daemon exits cleanly again (rc $rc$SAN)" test $rc -eq 0
left=$(pgrep -f -- "--admin-socket $RUN/servers/" | wc -l)
check "--stop-servers-on-exit: no vcuda-server left ($left)" test "$left" -eq 0
# ---- a VM of whole GPUs ---------------------------------------------------------------------------
# A daemon of its own: four GPUs (two on each of two NUMA nodes), a new
# database, servers of two stand-in devices each.
W0=GPU-00000000-0000-4000-8000-0000000000b0
W1=GPU-00000000-0000-4000-8000-0000000000b1
W3=GPU-00000000-0000-4000-8000-0000000000b3
INV=$VC_TMP/inventory-whole.json
cat >"$INV" <<EOF
{"gpus": [
  {"uuid": "$W0", "name": "Fake H100 80GB", "memory": "80G", "pci_bus_id": "00000000:18:00.0", "numa_node": 0},
  {"uuid": "$W1", "name": "Fake H100 80GB", "memory": "80G", "pci_bus_id": "00000000:2a:00.0", "numa_node": 0},
  {"uuid": "GPU-00000000-0000-4000-8000-0000000000b2", "name": "Fake H100 80GB", "memory": "80G",
   "pci_bus_id": "00000000:9a:00.0", "numa_node": 1},
  {"uuid": "$W3", "name": "Fake H100 80GB", "memory": "80G", "pci_bus_id": "00000000:bd:00.0", "numa_node": 1}
]}
EOF
rm -rf "$VC_TMP/db"
QPIDS=()
VCUDA_STANDIN_DEVICES=2 start_daemon || exit 1
"$CTL" vm add w1 --gpus 2 | sed 's/^/    /'
"$CTL" vm add s1 --mem-quota 8G >/dev/null
gpus_of() { "$CTL" --json vm show "$1" | j '[g["index"] for g in d["vm"]["gpus"]]'; }
check "whole: w1 takes gpus 0 and 1 whole, with their memory (160G) as its quota" \
	test "$(gpus_of w1) $("$CTL" --json vm show w1 | j '[d["vm"]["whole_gpus"], d["vm"]["mem_quota"]]')" = \
	"[0, 1] [true, $((160 * GiB))]"
check "whole: a VM of one GPU goes to gpu 2, not to w1's GPUs" test "$(gpus_of s1)" = "[2]"
check "whole: w1's two GPUs are on one NUMA node, and the event says so" event_matches "VM w1 added .*all on NUMA node 0"
"$CTL" vm add s2 --gpu 1 --mem-quota 1G 2>"$VC_TMP/err.txt"
rc=$?
check "whole: asking for one of w1's GPUs is refused (rc $rc), saying whose it is" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "VM w1.s whole" "$0"' "$VC_TMP/err.txt"
"$CTL" vm add w2 --gpus 2 2>"$VC_TMP/err.txt"
rc=$?
check "whole: two more whole GPUs there are not (rc $rc): only gpu 3 has no VM" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "takes them whole, and 1 of the GPUs" "$0"' "$VC_TMP/err.txt"
"$CTL" vm add w3 --gpu 2,3 2>"$VC_TMP/err.txt"
rc=$?
"$CTL" vm add w4 --gpu 3,3 2>>"$VC_TMP/err.txt"
rc=$rc$?
"$CTL" vm add w5 --gpu 3 --gpus 2 2>>"$VC_TMP/err.txt"
rc=$rc$?
check "whole: a GPU with a VM, a GPU named twice, a list shorter than --gpus: refused ($rc)" \
	bash -c '[ "$0" = 111 ] && grep -q "gpu 2 has VMs" "$1" && grep -q "names gpu 3 twice" "$1" &&
		 grep -q "names 1 GPU and the VM has 2" "$1"' "$rc" "$VC_TMP/err.txt"
"$CTL" --json gpu list >"$VC_TMP/gpus.json"
"$CTL" gpu list | tee "$VC_TMP/gpus.txt" | sed 's/^/    /'
check "whole: gpu list shows gpus 0 and 1 promised whole to w1" python3 - "$VC_TMP/gpus.json" "$VC_TMP/gpus.txt" <<'EOF'
import json, re, sys
g = {x["index"]: x for x in json.load(open(sys.argv[1]))["gpus"]}
assert g[0]["promised"] == g[1]["promised"] == 80 << 30, g
assert g[0].get("whole_vm") == g[1].get("whole_vm") == "w1", g
assert g[2]["promised"] == 8 << 30 and "whole_vm" not in g[2] and g[3]["promised"] == 0, g
assert [g[i]["numa_node"] for i in range(4)] == [0, 0, 1, 1], g
t = open(sys.argv[2]).read()
assert len(re.findall(r"1 \(w1's whole\)", t)) == 2, t
EOF
qemu_hold w1 "$VC_TMP/qw1.log" --device 1 --alloc $((64 * MiB)) --comm ddp && qemu_hold s1 "$VC_TMP/qs1.log"
pw=$("$CTL" --json vm show w1 | j 'd["vm"]["server_pid"]')
ps1=$("$CTL" --json vm show s1 | j 'd["vm"]["server_pid"]')
check "whole: w1's server serves both GPUs (--gpu $W0,$W1), shares neither (no --sched); s1's does" \
	bash -c 'tr "\0" " " </proc/$0/cmdline | grep -q -- "--gpu $2,$3 " && ! tr "\0" " " </proc/$0/cmdline | grep -q -- "--sched" &&
		 tr "\0" " " </proc/$1/cmdline | grep -q -- "--sched" && grep -q "devices=2" "$4"' "$pw" "$ps1" "$W0" "$W1" "$VC_TMP/qw1.log"
check "whole: w1's server counts its 64M on its second GPU" \
	test "$("$CTL" --json vm show w1 | j 'd["vm"]["live"]["mem_used_by_device"]')" = "[0, $((64 * MiB))]"
"$CTL" vm show w1 | sed -n '1,4p;/memory used/,/on device 1/p' | sed 's/^/    /'
check "whole: vm show names both GPUs, whole, and the memory on each" \
	bash -c '"$0" vm show w1 >"$1" && grep -q "device 1: *1 (.*, healthy), whole" "$1" && grep -q "on device 1: *64 MiB" "$1"' "$CTL" "$VC_TMP/w1.txt"
check "metrics: a live scrape with a VM of whole GPUs passes promtool check metrics" scrape whole
check "metrics: each of w1's GPUs promised whole, its 64M on gpu 1 only, its GPUs in vcuda_vm_info" \
	metrics_are whole "vcuda_gpu_memory_quota_bytes{gpu=\"$W0\"}" $((80 * GiB)) \
	"vcuda_gpu_memory_used_bytes{gpu=\"$W0\"}" 0 "vcuda_gpu_memory_used_bytes{gpu=\"$W1\"}" $((64 * MiB)) \
	"vcuda_gpu_vms{gpu=\"$W1\"}" 1 "vcuda_vm_info{vm=\"w1\",gpu=\"$W0,$W1\"}" 1
kill -TERM "$DPID"
wait "$DPID"
VCUDA_STANDIN_DEVICES=2 start_daemon --stop-servers-on-exit || exit 1
check "whole: after a restart w1 still has gpus 0 and 1, its server re-attached (pid $pw)" \
	bash -c '[ "$0" = "[0, 1]" ] && [ "$1" = "$2" ]' "$(gpus_of w1)" "$("$CTL" --json vm show w1 | j 'd["vm"]["server_pid"]')" "$pw"
"$CTL" gpu drain 1 >/dev/null
kill "${QPIDS[0]}" 2>/dev/null
wait "${QPIDS[0]}" 2>/dev/null
qemu_hold w1 "$VC_TMP/qw2.log" --alloc $((1 * MiB))
pw2=$("$CTL" --json vm show w1 | j 'd["vm"]["server_pid"]')
check "whole: gpu 1 drained, w1 moves whole to gpus 0 and 3 on its next open, with a new server (pid $pw -> $pw2)" \
	bash -c '[ "$0" = "[0, 3]" ] && [ "$1" != "$2" ] && tr "\0" " " </proc/$2/cmdline | grep -q -- "--gpu $3,$4 " &&
		 "$5" events --limit 20 | grep -q "VM w1 moved from gpu 0,1 (.*gpu 1 drained) to gpu 0,3 .*no NUMA node has 2 free"' \
	"$(gpus_of w1)" "$pw" "$pw2" "$W0" "$W3" "$CTL"
"$CTL" vm set w1 --gpus 1 --mem-quota 16G | sed 's/^/    /'
check "whole: vm set --gpus 1 makes w1 a VM of one GPU again (it moves when its QEMU reconnects)" \
	test "$("$CTL" --json vm show w1 | j '[len(d["vm"]["gpus"]), d["vm"]["whole_gpus"]]')" = "[1, false]"
for p in "${QPIDS[@]}"; do kill "$p" 2>/dev/null; done
kill -TERM "$DPID"
wait "$DPID"
rc=$?
for _ in $(seq 200); do [ "$(pgrep -f -- "--admin-socket $RUN/servers/" | wc -l)" -eq 0 ] && break; sleep 0.025; done
left=$(pgrep -f -- "--admin-socket $RUN/servers/" | wc -l)
check "whole: the daemon exits cleanly (rc $rc$SAN), no vcuda-server left ($left)" test "$rc" -eq 0 -a "$left" -eq 0

if [ "$fail" -ne 0 ]; then
	echo "---- daemon log (tail)"
	tail -60 "$DLOG"
	echo "---- failed checks"
	printf '%s\n' "${FAILED[@]}"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
