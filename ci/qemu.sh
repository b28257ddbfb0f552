#!/usr/bin/env bash
# ci/qemu.sh [--static|--fuzz]: QEMU 10.0.2 with virtio-vcuda-pci
# (qemu-patches/), built once per input and cached.
#
# Prints "qemu: ..." progress on stderr; the last (only) line on stdout is
# the output directory:
#   $VCUDA_CACHE/qemu-<variant>-<key16>/      variant: dynamic, static or fuzz
#     bin/qemu-system-x86_64                   (static: stripped, no slirp)
#     bin/qemu-fuzz-x86_64                     (fuzz only, and no qemu-system:
#                                              clang, libFuzzer, ASan+UBSan;
#                                              tools/fuzz-long.sh runs it)
#     bin/virtio-vcuda-test                    (dynamic only: the qtest)
#     share/bios-256k.bin linuxboot_dma.bin kvmvapic.bin
#     share/qemu -> .                          so that bin/qemu-system-x86_64
#                                              finds them without -L
#     BUILDINFO                                what went into the key
# key = sha256 of the tarball's sha256, every qemu-patches/*.patch, the
# configure arguments and this script. A directory that exists is reused.
#
# The source is Debian's qemu_10.0.2+ds.orig.tar.xz (bookworm-backports),
# pinned by sha256. Run as root on a bare Debian 12 to install what is
# missing; as another user everything must be there already.
#
# With VCUDA_QEMU_NO_BUILD set, a variant that is not cached is not built:
# exit 3 (make check runs the QEMU fuzz target only when tools/fuzz-long.sh
# built it already).
#
# The dynamic variant runs the device's qtest before it is installed; run
# it again with
#   QTEST_QEMU_BINARY=$out/bin/qemu-system-x86_64 $out/bin/virtio-vcuda-test
set -euo pipefail

QEMU_VERSION=10.0.2
TARBALL=qemu_${QEMU_VERSION}+ds.orig.tar.xz
TARBALL_SHA256=0901da33844a331bf8b3602b9c1fbd178e60b737c8e3ade678255bd090c9b9f1
APT_SOURCES=/etc/apt/sources.list.d/vcuda-src.sources

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
script="$here/ci/qemu.sh"
cache=${VCUDA_CACHE:-/var/cache/vcuda}

say() { echo "qemu: $*" >&2; }
die() { echo "qemu: error: $*" >&2; exit 1; }

variant=dynamic
case "${1:-}" in
"") ;;
--static) variant=static ;;
--fuzz) variant=fuzz ;;
-h | --help)
	sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//' >&2
	exit 0
	;;
*) die "unknown argument '$1' (usage: ci/qemu.sh [--static|--fuzz])" ;;
esac
[ $# -le 1 ] || die "usage: ci/qemu.sh [--static|--fuzz]"

# The FACTS.md recipe.
configure_args=(
	--python=/usr/bin/python3 --target-list=x86_64-softmmu
	--without-default-features --enable-kvm --enable-tcg --enable-pixman
	--enable-vhost-user --enable-vhost-kernel
	--disable-docs --disable-tools --disable-user --disable-werror
	--disable-install-blobs
)
if [ $variant = static ]; then
	configure_args+=(--static) # Debian has no static libslirp
elif [ $variant = fuzz ]; then
	# QEMU's fuzzing build (docs/devel/testing/fuzzing.rst): clang's
	# libFuzzer and sanitizers; the fuzz targets drive the machine
	# through qtest in the same process.
	configure_args+=(--cc=clang --cxx=clang++ --enable-fuzzing --enable-asan --enable-ubsan)
else
	configure_args+=(--enable-slirp)
fi
firmware=(/usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin
	/usr/share/qemu/kvmvapic.bin)

shopt -s nullglob
patches=("$here"/qemu-patches/*.patch)
shopt -u nullglob
[ ${#patches[@]} -gt 0 ] || die "no patches in $here/qemu-patches"

key=$({
	echo "tarball $TARBALL_SHA256"
	for p in "${patches[@]}"; do
		echo "patch ${p##*/} $(sha256sum <"$p" | cut -d' ' -f1)"
	done
	echo "configure ${configure_args[*]}"
	echo "script $(sha256sum <"$script" | cut -d' ' -f1)"
} | sha256sum | cut -c1-16)
out="$cache/qemu-$variant-$key"

binary=qemu-system-x86_64
[ $variant = fuzz ] && binary=qemu-fuzz-x86_64
if [ -x "$out/bin/$binary" ]; then
	say "cached $out"
	echo "$out"
	exit 0
fi
if [ -n "${VCUDA_QEMU_NO_BUILD:-}" ]; then
	say "not cached: $out (VCUDA_QEMU_NO_BUILD set, not building)"
	exit 3
fi

# Packages

is_root() { [ "$(id -u)" -eq 0 ]; }
apt_updated=0
apt_update() {
	[ $apt_updated -eq 1 ] && return 0
	is_root || die "apt's package lists need an update (apt-get update as root)"
	say "apt-get update"
	apt-get update -q >&2 || die "apt-get update failed"
	apt_updated=1
}

ensure_sources() {
	[ -f "$APT_SOURCES" ] && return 0
	is_root || die "$APT_SOURCES is missing (deb-src for bookworm and bookworm-backports); run as root to add it"
	say "adding $APT_SOURCES"
	cat >"$APT_SOURCES" <<'EOF'
Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt_updated=0
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

ensure_packages() {
	local pkgs=(build-essential pkg-config python3 python3-venv ninja-build
		flex bison libglib2.0-dev libpixman-1-dev libfdt-dev
		curl ca-certificates xz-utils patch seabios qemu-system-data)
	local bpo=(python3-pycotap)
	local missing=() missing_bpo=() p v
	[ $variant = dynamic ] && pkgs+=(libslirp-dev)
	[ $variant = fuzz ] && pkgs+=(clang)
	for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done
	for p in "${bpo[@]}"; do installed "$p" || missing_bpo+=("$p"); done
	# QEMU 10 needs meson >= 1.5: bookworm has 1.0, bookworm-backports more.
	v=$(dpkg-query -W -f='${Version}' meson 2>/dev/null || true)
	if [ -z "$v" ] || dpkg --compare-versions "$v" lt 1.5; then
		missing_bpo+=(meson)
	fi
	[ ${#missing[@]} -eq 0 ] && [ ${#missing_bpo[@]} -eq 0 ] && return 0
	is_root || die "missing packages: ${missing[*]} ${missing_bpo[*]} (bookworm-backports: meson >= 1.5, python3-pycotap); run as root to install them"
	ensure_sources
	apt_update
	export DEBIAN_FRONTEND=noninteractive
	if [ ${#missing[@]} -gt 0 ]; then
		say "installing ${missing[*]}"
		apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
			die "apt-get install ${missing[*]} failed"
	fi
	if [ ${#missing_bpo[@]} -gt 0 ]; then
		say "installing ${missing_bpo[*]} from bookworm-backports"
		apt-get install -y -q --no-install-recommends -t bookworm-backports \
			"${missing_bpo[@]}" >&2 ||
			die "apt-get install -t bookworm-backports ${missing_bpo[*]} failed"
	fi
}

# The tarball

sha_ok() { [ "$(sha256sum <"$1" | cut -d' ' -f1)" = "$TARBALL_SHA256" ]; }

# apt-get source names the file with its URL encoding when it downloads it.
find_tarball() {
	local f
	for f in "$cache/$TARBALL" "$cache/${TARBALL//+/%2b}"; do
		[ -f "$f" ] || continue
		if ! sha_ok "$f"; then
			echo "qemu: error: $f does not have the pinned sha256 $TARBALL_SHA256; remove it" >&2
			return 2
		fi
		echo "$f"
		return 0
	done
	return 1
}

fetch_tarball() {
	local line url size hash part
	ensure_sources
	line=$(apt-get source --print-uris -t bookworm-backports qemu 2>/dev/null | grep -F "$TARBALL" || true)
	if [ -z "$line" ]; then
		apt_update
		line=$(apt-get source --print-uris -t bookworm-backports qemu | grep -F "$TARBALL" || true)
	fi
	[ -n "$line" ] || die "apt-get source --print-uris -t bookworm-backports qemu does not list $TARBALL (has bookworm-backports moved on from $QEMU_VERSION?)"
	# 'URL' NAME SIZE SHA256:HASH
	read -r url _ size hash <<<"$line"
	url=${url//\'/}
	hash=${hash#SHA256:}
	[ "$hash" = "$TARBALL_SHA256" ] || die "Debian's $TARBALL has sha256 $hash, not the pinned $TARBALL_SHA256; refusing it"
	say "downloading $url ($size bytes)"
	part="$cache/.$TARBALL.part"
	curl -fsSL --retry 3 -o "$part" "$url" || die "download of $url failed"
	sha_ok "$part" || {
		rm -f "$part"
		die "the download of $url does not have sha256 $TARBALL_SHA256"
	}
	mv "$part" "$cache/$TARBALL"
	echo "$cache/$TARBALL"
}

# The build

mkdir -p "$cache" || die "cannot create $cache"
ensure_packages
for f in "${firmware[@]}"; do [ -f "$f" ] || die "$f is missing (packages seabios, qemu-system-data)"; done
rc=0
tarball=$(find_tarball) || rc=$?
if [ $rc -eq 1 ]; then
	tarball=$(fetch_tarball) || exit 1
elif [ $rc -ne 0 ]; then
	exit 1
fi

tmp=$(mktemp -d "$cache/.qemu-$variant-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log="$tmp/build.log"
fail() {
	echo "qemu: error: $* failed; the end of its log:" >&2
	tail -40 "$log" >&2
	exit 1
}
t0=$SECONDS

say "extracting $(basename "$tarball")"
mkdir "$tmp/src"
tar -xJf "$tarball" -C "$tmp/src" --strip-components=1 || die "cannot extract $tarball"
for p in "${patches[@]}"; do
	say "applying ${p##*/}"
	patch -d "$tmp/src" -p1 --batch --forward --quiet <"$p" >>"$log" 2>&1 || fail "patch ${p##*/}"
done

say "configuring ($variant)"
mkdir "$tmp/build"
(cd "$tmp/build" && ../src/configure "${configure_args[@]}") >>"$log" 2>&1 || fail configure
targets=("$binary")
[ $variant = dynamic ] && targets+=(tests/qtest/virtio-vcuda-test)
say "building ${targets[*]} with $(nproc) jobs"
ninja -C "$tmp/build" -j"$(nproc)" "${targets[@]}" >>"$log" 2>&1 || fail ninja

mkdir -p "$tmp/out/bin" "$tmp/out/share"
cp "$tmp/build/$binary" "$tmp/out/bin/"
if [ $variant = static ]; then
	strip "$tmp/out/bin/qemu-system-x86_64"
elif [ $variant = dynamic ]; then
	cp "$tmp/build/tests/qtest/virtio-vcuda-test" "$tmp/out/bin/"
fi
cp "${firmware[@]}" "$tmp/out/share/"
# A relocatable QEMU looks for its data in BINDIR/../share/qemu.
ln -s . "$tmp/out/share/qemu"

if [ $variant = dynamic ]; then
	say "running the qtest"
	QTEST_QEMU_BINARY="$tmp/out/bin/qemu-system-x86_64" \
		"$tmp/out/bin/virtio-vcuda-test" --tap >"$tmp/qtest.log" 2>&1 || {
		cat "$tmp/qtest.log" >>"$log"
		fail "the qtest virtio-vcuda-test"
	}
	say "qtest: $(grep -c '^ok ' "$tmp/qtest.log") passed"
fi
{
	echo "QEMU $QEMU_VERSION ($variant), built $(date -u +%FT%TZ) in $((SECONDS - t0)) s"
	echo "tarball $TARBALL sha256 $TARBALL_SHA256"
	for p in "${patches[@]}"; do echo "patch ${p##*/}"; done
	echo "configure ${configure_args[*]}"
} >"$tmp/out/BUILDINFO"

# Another run may have finished the same build meanwhile: keep the first.
if ! mv -T "$tmp/out" "$out" 2>/dev/null; then
	[ -x "$out/bin/$binary" ] || die "cannot create $out"
fi
say "built $out in $((SECONDS - t0)) s"
echo "$out"
