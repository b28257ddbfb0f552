#!/bin/bash
# ci/vm-initramfs.sh OUT.img.gz PAYLOAD_DIR [EXTRA[:GUEST_PATH]...]
#
# Build the test VMs' initramfs (gzip'ed newc cpio) for the guest kernel of
# ci/guest-kernel.sh:
#  - busybox-static from this host, with a link for each of its applets;
#  - the modules for virtio-pci, virtio-blk and ext4 (a payload disk can be
#    mounted) with their dependencies from modules.dep, and vcuda.ko: an
#    EXTRA named vcuda.ko, else $VCUDA_KO, else built here from
#    guest-lib/kmod (into build/kmod);
#  - PAYLOAD_DIR copied to /vmtest; each EXTRA file that is a kernel module
#    (*.ko) installed and loaded after the kernel's own, in the order given;
#    any other EXTRA copied to GUEST_PATH (default /vmtest/<its name>);
#  - every ELF file among them with its shared-library closure, found with
#    this host's ldd and copied to the same paths: the guest runs the host's
#    Debian 12 libraries. Libraries that a program dlopen()s (libcuda.so.1
#    from libcudart, say) are not in that closure: put them in the payload
#    (their own closure is then added) and point LD_LIBRARY_PATH at them, or
#    rely on /etc/ld.so.cache, which lists every directory that received a
#    library;
#  - /init: mounts proc, sys, devtmpfs, tmpfs on /tmp; loads the modules in
#    dependency order; runs /vmtest/run.sh as root (cwd /vmtest) with its
#    output on the console (console=ttyS0 for the serial port); prints
#    "vmtest: exit N" and powers off. A user "vmuser" (uid/gid 1000, home
#    /home/vmuser) exists for unprivileged runs: su vmuser -c CMD.
#
# The guest kernel comes from ci/guest-kernel.sh unless KVER and MODULES are
# set already. Needs busybox-static and cpio; no root (device nodes are
# written into the archive directly).
set -euo pipefail

usage() {
	echo "usage: $0 OUT.img.gz PAYLOAD_DIR [EXTRA[:GUEST_PATH]...]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
out=$1
payload=$2
shift 2
[ -d "$payload" ] || { echo "$0: $payload is not a directory" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)

if [ -z "${KVER:-}" ] || [ -z "${MODULES:-}" ]; then
	eval "$("$here/guest-kernel.sh")"
fi
busybox=${BUSYBOX:-/bin/busybox}
if [ ! -x "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
	echo "$0: $busybox is not a static busybox (apt-get install busybox-static)" >&2
	exit 1
fi
extra_kos=()
for extra in "$@"; do
	case $extra in
	*.ko)
		[ -f "$extra" ] || { echo "$0: no module $extra" >&2; exit 1; }
		extra_kos+=("$extra")
		[ "$(basename "$extra")" != vcuda.ko ] || VCUDA_KO=$extra
		;;
	esac
done
if [ -z "${VCUDA_KO:-}" ]; then
	[ -n "${KBUILD:-}" ] || eval "$("$here/guest-kernel.sh")"
	make -s -C "$repo/guest-lib/kmod" KDIR="$KBUILD" >&2
	VCUDA_KO=$repo/build/kmod/vcuda.ko
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/vm-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# Merged /usr like the host, so that ldd's paths land where they point.
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,root,home/vmuser,vmtest}
for d in bin sbin lib lib64; do
	ln -s "usr/$d" "$stage/$d"
done
chmod 1777 "$stage/tmp"

cp "$busybox" "$stage/usr/bin/busybox"
while read -r applet; do
	case $applet in bin/busybox | usr/bin/busybox) continue ;; esac
	ln -sf /usr/bin/busybox "$stage/$applet"
done < <("$busybox" --list-full)

# copy_elf_libs FILE: the shared libraries FILE needs (ldd lists the whole
# closure) to the same paths in $stage. Libraries of the payload itself are
# found there first (payload_path) and not copied again, so that a host
# library of the same name (the real libcuda.so.1 on a GPU machine, say)
# does not slip in.
declare -A seen_lib=()
copy_elf_libs() {
	local lib
	# ldd prints "name => /path (addr)" or "/path (addr)"; vdso has no path.
	while read -r lib; do
		case $lib in "$stage"/*) continue ;; esac
		[ -z "${seen_lib[$lib]:-}" ] || continue
		seen_lib[$lib]=1
		mkdir -p "$stage$(dirname "$lib")"
		cp -L "$lib" "$stage$lib"
	done < <(LD_LIBRARY_PATH=$payload_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$1" 2>/dev/null |
		awk '$2 == "=>" && $3 ~ /^\// { print $3; next }
		     $1 ~ /^\// { print $1 }')
}
is_elf() {
	[ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]
}

cp -a "$payload/." "$stage/vmtest/"
elf_roots=("$stage/vmtest")
for extra in "$@"; do
	case $extra in *.ko) continue ;; esac
	src=${extra%%:*}
	dst=/vmtest/$(basename "$src")
	[ "$src" = "$extra" ] || dst=${extra#*:}
	mkdir -p "$stage$(dirname "$dst")"
	cp -L "$src" "$stage$dst"
	elf_roots+=("$stage$dst")
done
payload_path=$(find "${elf_roots[@]}" -name '*.so*' -type f -printf '%h\n' | sort -u | paste -sd:)
while IFS= read -r -d '' f; do
	if is_elf "$f"; then
		copy_elf_libs "$f"
	fi
done < <(find "${elf_roots[@]}" -type f -print0)
if [ ${#seen_lib[@]} -gt 0 ] && command -v ldconfig >/dev/null; then
	for lib in "${!seen_lib[@]}"; do dirname "$lib"; done | sort -u >"$stage/etc/ld.so.conf"
	ldconfig -X -r "$stage"
fi

# Modules: the wanted ones and everything they need, dependencies first.
# ext4 wants crc32c through the crypto API (no modules.dep edge); the
# generic one, since TCG's CPU may lack SSE4.2.
wanted="virtio_pci virtio_blk crc32c_generic ext4"
order_txt=$(awk -v wanted="$wanted" '
	function name(path) { sub(/.*\//, "", path); sub(/\.ko$/, "", path); gsub(/-/, "_", path); return path }
	function add(n,   i, k, d) {
		if (n in done) return
		if (!(n in path)) { print "module " n " not in modules.dep" > "/dev/stderr"; bad = 1; return }
		done[n] = 1
		k = split(deps[n], d, " ")
		for (i = 1; i <= k; i++) add(name(d[i]))
		print path[n]
	}
	{ m = $1; sub(/:$/, "", m); n = name(m); path[n] = m; $1 = ""; deps[n] = $0 }
	END { k = split(wanted, w, " "); for (i = 1; i <= k; i++) add(w[i]); exit bad }
	' "$MODULES/modules.dep")
mapfile -t order <<<"$order_txt"
mdir=$stage/lib/modules/$KVER
for m in "${order[@]}"; do
	mkdir -p "$mdir/$(dirname "$m")"
	cp "$MODULES/$m" "$mdir/$m"
done
mkdir -p "$mdir/extra"
case " ${extra_kos[*]} " in
*" $VCUDA_KO "*) ;;
*) extra_kos=("$VCUDA_KO" "${extra_kos[@]}") ;;
esac
for ko in "${extra_kos[@]}"; do
	cp "$ko" "$mdir/extra/"
	order+=("extra/$(basename "$ko")")
done
printf '%s\n' "${order[@]}" >"$stage/etc/vm-modules"
# modules.dep of what is here, for modprobe/rmmod in run.sh.
"$busybox" depmod -b "$stage" "$KVER"

cat >"$stage/etc/passwd" <<-'EOF'
root:x:0:0:root:/root:/bin/sh
vmuser:x:1000:1000:vcuda test user:/home/vmuser:/bin/sh
EOF
cat >"$stage/etc/group" <<-'EOF'
root:x:0:
vmuser:x:1000:
EOF
chmod 700 "$stage/root"

cat >"$stage/init" <<EOF
#!/bin/sh
# vcuda test VM: set up, run /vmtest/run.sh, power off (ci/vm-initramfs.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
chown 1000:1000 /home/vmuser
hostname vcuda-vm
while read -r m; do
	insmod /lib/modules/$KVER/\$m || echo "vmtest: insmod \$m failed"
done </etc/vm-modules
rc=0
if [ -f /vmtest/run.sh ]; then
	cd /vmtest
	sh /vmtest/run.sh
	rc=\$?
	cd /
fi
echo "vmtest: exit \$rc"
sync
poweroff -f
EOF
chmod 755 "$stage/init"

# cpio_entry INO MODE RDEVMAJOR RDEVMINOR NAME: a newc header with no data.
# Device nodes go into the archive this way, so that the kernel finds
# /dev/console before /init runs, and building needs no root for mknod.
cpio_entry() {
	local namesize=$((${#5} + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%s\0' \
		"$1" "$2" 0 0 1 0 0 0 0 "$3" "$4" "$namesize" 0 "$5"
	# the 110-byte header and the name are padded to 4 bytes
	head -c $(((4 - (110 + namesize) % 4) % 4)) /dev/zero
}

mkdir -p "$(dirname "$out")"
{
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0)
	cpio_entry 900001 $((0x2180)) 5 1 dev/console	# S_IFCHR | 0600
	cpio_entry 900002 $((0x21b6)) 1 3 dev/null	# S_IFCHR | 0666
	cpio_entry 0 0 0 0 'TRAILER!!!'
} | gzip -6 >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out: $(du -h "$out" | cut -f1), kernel $KVER, modules: ${order[*]}" >&2
