#!/usr/bin/env bash
# ci/packages-test.sh: the operator's path (README.md), on this machine.
#
#   build     vcuda-host and vcuda-guest with dpkg-buildpackage -b, from a copy
#             of the tree (the .debs land next to it, not next to this clone)
#   install   both with apt, as an operator would (their dependencies from the
#             archive); the group, the units, the DKMS source
#   units     systemd-analyze verify of every unit; their exposure score
#   dkms      vcuda.ko built by DKMS for the test VMs' kernel, when
#             ci/guest-kernel.sh has it cached (the VM steps do)
#   libvirt   the domain example passes virt-xml-validate
#   manager   ci/mgmt-test.sh against the installed binaries, the daemon
#             started with the installed unit's ExecStart (metrics included)
#   remove    apt purge, leaving nothing of either package (KEEP_PACKAGES=1
#             keeps them)
#
# Needs root (apt). Prints "ok - ..." per check and "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
. ci/lib.sh
ci_tmpdir pkg
export DEBIAN_FRONTEND=noninteractive
JOBS=${JOBS:-$(nproc)}

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

[ "$(id -u)" -eq 0 ] || { echo "needs root (installs packages)"; exit 1; }
if dpkg-query -W vcuda-host vcuda-guest >/dev/null 2>&1; then
	echo "vcuda packages are installed already; remove them first (apt purge vcuda-host vcuda-guest)"
	exit 1
fi
removed=0
remove_packages() {
	[ "$removed" = 1 ] || [ -n "${KEEP_PACKAGES:-}" ] && return 0
	removed=1
	apt-get purge -y -q vcuda-host vcuda-guest >"$VC_TMP/purge.log" 2>&1
}
trap 'remove_packages; kill $(jobs -p) 2>/dev/null || true; rm -rf "$VC_TMP"' EXIT

# ---- build -------------------------------------------------------------------------------------
t0=$SECONDS
src=$VC_TMP/src/vcuda
mkdir -p "$src"
git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$src"
if (cd "$src" && DEB_BUILD_OPTIONS="parallel=$JOBS" dpkg-buildpackage -b -us -uc) >"$VC_TMP/build.log" 2>&1; then
	ok "dpkg-buildpackage -b: $(cd "$VC_TMP/src" && ls vcuda-host_*.deb vcuda-guest_*.deb | tr '\n' ' ')in $((SECONDS - t0)) s"
else
	bad "dpkg-buildpackage -b failed:"
	tail -30 "$VC_TMP/build.log"
	exit 1
fi

# ---- install --------------------------------------------------------------------------------
t0=$SECONDS
if apt-get install -y -q --no-install-recommends "$VC_TMP"/src/vcuda-host_*.deb "$VC_TMP"/src/vcuda-guest_*.deb \
	>"$VC_TMP/install.log" 2>&1; then
	ok "apt install of both packages, with their dependencies, in $((SECONDS - t0)) s"
else
	bad "apt install failed:"
	tail -30 "$VC_TMP/install.log"
	exit 1
fi
grep -iE "dkms|error" "$VC_TMP/install.log" | sed 's/^/    /' | head -10
check "installed: /usr/bin/vcuda-server, vcuda-mgmtd, vcudactl; the units; /etc/default/vcuda-mgmtd; the admin group" \
	bash -c 'for f in /usr/bin/vcuda-server /usr/bin/vcuda-mgmtd /usr/bin/vcudactl /lib/systemd/system/vcuda-mgmtd.service \
		/lib/systemd/system/vcuda-server@.service /etc/default/vcuda-mgmtd; do [ -e "$f" ] || { echo "missing $f"; exit 1; }; done
		getent group vcuda-admin >/dev/null'
check "vcuda-mgmtd.service enabled (started at boot), not started at installation" \
	test -e /etc/systemd/system/multi-user.target.wants/vcuda-mgmtd.service
check "guest: libcuda.so.1 found by the dynamic linker from its own directory; vcuda.ko's source registered with DKMS" \
	bash -c 'ldconfig -p | grep -q "libcuda.so.1 .*=> /usr/lib/x86_64-linux-gnu/vcuda/libcuda.so.1" &&
		dkms status vcuda/1.0.0 | grep -q "^vcuda/1.0.0"'
check "the installed vcuda-server runs and takes the manager's flags" \
	bash -c '/usr/bin/vcuda-server --help 2>&1 | grep -q -- "--admin-socket"'

# ---- units --------------------------------------------------------------------------------
cp /lib/systemd/system/vcuda-server@.service "$VC_TMP/vcuda-server@ci.service"
check "systemd-analyze verify: vcuda-mgmtd.service and vcuda-server@.service (as an instance)" \
	bash -c 'out=$(systemd-analyze verify /lib/systemd/system/vcuda-mgmtd.service "$0" 2>&1); [ -z "$out" ] || { echo "$out"; exit 1; }' \
	"$VC_TMP/vcuda-server@ci.service"
for u in /lib/systemd/system/vcuda-mgmtd.service "$VC_TMP/vcuda-server@ci.service"; do
	systemd-analyze security --offline=yes "$u" 2>/dev/null | tail -1 | sed 's/^/    /'
done
pid1=$(cat /proc/1/comm)
if [ "$pid1" = systemd ]; then
	echo "    systemd is PID 1; the manager test still starts the daemon from the unit's ExecStart, with its own paths"
else
	echo "    systemd is not PID 1 here ($pid1): the daemon is started with the unit's ExecStart (ci/unit-exec.py), outside its sandbox"
fi

# ---- DKMS, for the test VMs' kernel ------------------------------------------------------
genv=$(ls -d "${VCUDA_CACHE:-/var/cache/vcuda}"/guest-kernel-*/env 2>/dev/null | head -1)
if [ -n "$genv" ]; then
	# shellcheck disable=SC1090
	. "$genv"
	t0=$SECONDS
	if dkms build -m vcuda -v 1.0.0 -k "$KVER" --kernelsourcedir "$KBUILD" >"$VC_TMP/dkms.log" 2>&1 &&
		modinfo "/var/lib/dkms/vcuda/1.0.0/$KVER/x86_64/module/vcuda.ko" | grep -q "^vermagic: *$KVER "; then
		ok "dkms build: vcuda.ko for the guest kernel $KVER, in $((SECONDS - t0)) s"
	else
		bad "dkms build for $KVER failed:"
		tail -20 "$VC_TMP/dkms.log"
		find /var/lib/dkms/vcuda -name make.log -exec tail -20 {} \;
	fi
else
	echo "skip - dkms build: no cached guest kernel (ci/guest-kernel.sh)"
fi

# ---- libvirt -------------------------------------------------------------------------------
check "the libvirt domain example (vcuda-host's examples) passes virt-xml-validate" \
	virt-xml-validate /usr/share/doc/vcuda-host/examples/vcuda-vm.xml domain

# ---- the manager, installed ---------------------------------------------------------------
t0=$SECONDS
MGMT_INSTALLED=1 bash ci/mgmt-test.sh release >"$VC_TMP/mgmt.log" 2>&1
rc=$?
grep -E '^(not ok|vcuda mgmt test|[0-9]+ passed)' "$VC_TMP/mgmt.log" | sed 's/^/    /'
grep -E '^ok - metrics: a live scrape' "$VC_TMP/mgmt.log" | sed 's/^/    /'
if [ $rc -eq 0 ]; then
	ok "the manager's end-to-end test against /usr/bin and the installed unit, metrics and promtool included, in $((SECONDS - t0)) s"
else
	bad "the manager's end-to-end test against the installed packages"
	tail -40 "$VC_TMP/mgmt.log"
fi

# ---- remove --------------------------------------------------------------------------------
if [ -z "${KEEP_PACKAGES:-}" ]; then
	remove_packages
	check "apt purge: both packages gone, no files left (DKMS tree, units, /etc/default)" \
		bash -c '! dpkg-query -W vcuda-host vcuda-guest >/dev/null 2>&1 && [ ! -e /usr/bin/vcuda-mgmtd ] &&
			[ ! -e /var/lib/dkms/vcuda ] && [ ! -e /usr/src/vcuda-1.0.0 ] && [ ! -e /etc/default/vcuda-mgmtd ] &&
			! ldconfig -p | grep -q /vcuda/libcuda.so.1'
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
