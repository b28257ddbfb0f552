#!/usr/bin/env bash
# Install what building and testing vcuda needs on Debian 12, if it is missing.
set -euo pipefail

pkgs=(build-essential pkg-config python3 clang libclang-rt-14-dev check libsubunit-dev libsqlite3-dev libjansson-dev libzstd-dev
      busybox-static cpio curl xz-utils libelf1
      libmicrohttpd-dev prometheus
      debhelper dh-dkms dkms libvirt-clients systemd)
# libzstd-dev: zstd.h for the server's reading of compressed fatbin entries (libzstd itself is
# loaded at run time); libmicrohttpd-dev: vcuda-mgmtd's /metrics; prometheus: promtool, which checks a live scrape.
# debhelper, dh-dkms, dkms: the Debian packages (packaging/, debian/); libvirt-clients: virt-xml-validate
# for the libvirt example; systemd: systemd-analyze verify of the units.

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all build and test packages present"
	exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
