#!/bin/bash
# ci/guest-kernel.sh: fetch the test VMs' guest kernel (Debian bookworm's 6.1)
# with its modules and the headers that build vcuda.ko against it.
#
# The packages are unpacked with dpkg -x into one private root, never
# installed: ${VCUDA_CACHE:-/var/cache/vcuda}/guest-kernel-<kver>/root. A
# second run finds the cache and prints the same result at once.
#
# The version is the newest 6.1 that apt knows for linux-image-amd64
# (bookworm or bookworm-security; bookworm-backports' 6.12 is never taken).
# VCUDA_GUEST_KERNEL_VERSION=6.1.192-2 pins a Debian package version instead.
#
# Output: $CACHE/guest-kernel-<kver>/env, printed as the last lines of
# stdout, for `source` or `eval`:
#   KVER      the guest's uname -r (6.1.0-56-amd64)
#   VMLINUZ   the kernel image for qemu -kernel
#   MODULES   lib/modules/<kver> of that kernel (modules.dep included)
#   KBUILD    the headers' build tree: make -C "$KBUILD" M=... modules
#   GUEST_KERNEL_ROOT  the unpacked root holding all of them
#   GUEST_ENV_FILE     this file
set -euo pipefail

cache=${VCUDA_CACHE:-/var/cache/vcuda}

log() { echo "guest-kernel: $*" >&2; }

# metapackage_versions: "version kver" for each 6.1 linux-image-amd64 that
# apt knows, read from the Depends of each stanza.
metapackage_versions() {
	apt-cache show linux-image-amd64 2>/dev/null | awk '
		/^Version: / { v = $2 }
		/^Depends: / {
			if (v ~ /^6\.1\./ && match($0, /linux-image-6\.1\.[0-9]+-[0-9]+-amd64/))
				print v, substr($0, RSTART + 12, RLENGTH - 12)
		}'
}

# pick_version: the newest (or the pinned) "version kver" line.
pick_version() {
	local best="" v k bv
	while read -r v k; do
		if [ -n "${VCUDA_GUEST_KERNEL_VERSION:-}" ]; then
			[ "$v" = "$VCUDA_GUEST_KERNEL_VERSION" ] && best="$v $k"
			continue
		fi
		bv=${best%% *}
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$bv"; then
			best="$v $k"
		fi
	done < <(metapackage_versions)
	echo "$best"
}

sel=$(pick_version)
if [ -z "$sel" ]; then
	log "linux-image-amd64 6.1 unknown to apt; running apt-get update"
	apt-get update -qq >&2
	sel=$(pick_version)
fi
if [ -z "$sel" ]; then
	log "no 6.1 linux-image-amd64${VCUDA_GUEST_KERNEL_VERSION:+ $VCUDA_GUEST_KERNEL_VERSION} in apt's lists"
	exit 1
fi
pkgver=${sel%% *}
kver=${sel#* }
abi=${kver%-amd64}
dir=$cache/guest-kernel-$kver

if [ ! -f "$dir/env" ]; then
	start=$(date +%s)
	log "fetching $kver (Debian $pkgver) into $dir"
	mkdir -p "$cache"
	tmp=$(mktemp -d "$cache/.guest-kernel-$kver.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	mkdir "$tmp/debs" "$tmp/root"
	# world-readable, and apt's _apt user may write the downloads
	chmod 755 "$tmp"
	chmod 777 "$tmp/debs"
	# linux-kbuild-6.1 exists in several versions (bookworm and -security):
	# take the one built from the same source as the image, or else the
	# newest of the same upstream release (the security archive has carried
	# a kbuild of 6.1.192-3 beside an image of 6.1.192-2: kbuild is the
	# build tools, the same for both).
	kbuild_version() {
		local v best=""
		while read -r v; do
			[ "$v" = "$pkgver" ] && { echo "$v"; return; }
			[ "${v%-*}" = "${pkgver%-*}" ] || continue
			if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
		done < <(apt-cache madison linux-kbuild-6.1 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $2); print $2 }')
		echo "${best:-$pkgver}"
	}
	download() {
		(cd "$tmp/debs" && apt-get download -q \
			"linux-image-$kver=$pkgver" \
			"linux-headers-$kver=$pkgver" \
			"linux-headers-$abi-common=$pkgver" \
			"linux-kbuild-6.1=$(kbuild_version)" >&2)
	}
	# The security archive drops a version once the next one is out: with
	# stale lists, update them and take what is current.
	if ! download; then
		log "download failed; running apt-get update"
		apt-get update -qq >&2
		sel=$(pick_version)
		if [ "${sel#* }" != "$kver" ]; then
			log "apt now offers ${sel#* } (Debian ${sel%% *}); fetching that"
			rm -rf "$tmp"
			exec "$0" "$@"
		fi
		pkgver=${sel%% *}
		rm -f "$tmp"/debs/*.deb
		download
	fi
	for deb in "$tmp"/debs/*.deb; do
		dpkg -x "$deb" "$tmp/root"
	done
	rm -rf "$tmp/debs"
	root=$dir/root
	# Debian's packages expect to sit at /: lib/modules/<kver>/{build,source}
	# are absolute links, and the headers' Makefile includes the -common
	# tree's by absolute path. Make the links relative and point the include
	# at the common tree's final place in the cache.
	while IFS= read -r link; do
		target=$(readlink "$link")
		case $target in
		/*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$tmp/root$target")" "$link" ;;
		esac
	done < <(find "$tmp/root" -type l)
	sed -i "s|^include /usr/src/|include $root/usr/src/|" "$tmp/root/usr/src/linux-headers-$kver/Makefile"
	# Debian's postinst runs depmod, dpkg -x does not: generate modules.dep
	# (ci/vm-initramfs.sh reads it). kmod's depmod where installed, else
	# busybox's (same modules.dep format).
	if command -v depmod >/dev/null; then
		depmod -b "$tmp/root" "$kver"
	elif [ -x /sbin/depmod ]; then
		/sbin/depmod -b "$tmp/root" "$kver"
	else
		busybox depmod -b "$tmp/root" "$kver"
	fi
	[ -s "$tmp/root/lib/modules/$kver/modules.dep" ] || { log "depmod made no modules.dep"; exit 1; }

	# Every symlink of the headers tree must land inside the root (the
	# relative ones to ../../lib/linux-kbuild-6.1 included).
	bad=0
	while IFS= read -r link; do
		target=$(readlink -f "$link" || true)
		case $target in
		"$tmp/root"/*) [ -e "$target" ] || { log "dangling: $link"; bad=1; } ;;
		*) log "escapes the root: $link -> $(readlink "$link")"; bad=1 ;;
		esac
	done < <(find "$tmp/root/usr/src" "$tmp/root/lib/modules/$kver" -type l)
	[ $bad -eq 0 ] || exit 1
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || { log "no vmlinuz in the image package"; exit 1; }

	cat >"$tmp/env" <<-EOF
	KVER=$kver
	GUEST_KERNEL_ROOT=$root
	VMLINUZ=$root/boot/vmlinuz-$kver
	MODULES=$root/lib/modules/$kver
	KBUILD=$root/usr/src/linux-headers-$kver
	GUEST_ENV_FILE=$dir/env
	EOF
	# Publish in one rename so that a concurrent or interrupted run never
	# sees half a tree; a lost race leaves the winner's copy.
	if ! mv -T "$tmp" "$dir" 2>/dev/null; then
		log "$dir appeared meanwhile; keeping it"
	else
		trap - EXIT
	fi
	log "fetched in $(($(date +%s) - start)) s"
fi

cat "$dir/env"
