#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fetches a distribution's kernel packages (kernel image and modules) for the qemu guests,
# without touching the system's apt setup: a private sources list, lists and cache under the
# destination directory.
#
#   tests/vm/fetch-kernel.sh NAME DIR
#
# NAME is one of the kernels routers and distributions ship:
#   5.10  Debian 11 (bullseye), as OpenWrt 22.03
#   5.15  Ubuntu 22.04 (jammy), as OpenWrt 23.05 (amd64 only: Ubuntu keeps other
#         architectures on another server)
#   6.1   Debian 12 (bookworm)
#   6.12  Debian 13 (trixie), as OpenWrt 25.12
# Leaves DIR/NAME/vmlinuz, DIR/NAME/lib/modules/<release>/ and DIR/NAME/release. Does nothing
# when they are already there.
set -euo pipefail

name=${1:?usage: fetch-kernel.sh NAME DIR}
top=$(realpath -m "${2:?usage: fetch-kernel.sh NAME DIR}")
arch=${VM_ARCH:-amd64}

distro=debian
case "$name" in
5.10) suite=bullseye ;;
5.15) distro=ubuntu suite=jammy ;;
6.1) suite=bookworm ;;
6.12) suite=trixie ;;
*)
	echo "fetch-kernel.sh: unknown kernel '$name' (5.10, 5.15, 6.1 or 6.12)" >&2
	exit 2
	;;
esac
if [ "$distro" = ubuntu ] && [ "$arch" != amd64 ]; then
	echo "fetch-kernel.sh: $name is Ubuntu's, fetched for amd64 only" >&2
	exit 2
fi

dir=$top/$name
[ "$arch" = amd64 ] || dir=$top/$name-$arch
if [ -s "$dir/vmlinuz" ] && [ -s "$dir/release" ]; then
	exit 0
fi
apt_dir=$dir/apt
mkdir -p "$dir/debs"
# shellcheck source=scripts/debian-apt.sh
. "$(dirname "$0")/../../scripts/debian-apt.sh"
if [ "$distro" = ubuntu ]; then
	ubuntu_apt_setup "$suite" "$apt_dir"
	meta=linux-image-generic
else
	debian_apt_setup "$arch" "$suite" "$apt_dir"
	meta=linux-image-$arch
	# 32-bit ARM's flavour for boards of ARMv7 cores (qemu's virt), without LPAE as
	# routers' ipq40xx and mvebu kernels.
	[ "$arch" = armhf ] && meta=linux-image-armmp
	# 32-bit little-endian MIPS (ramips' MT7621 and MT76x8 routers) on qemu's Malta board.
	[ "$arch" = mipsel ] && meta=linux-image-4kc-malta
fi
# The metapackage names this suite's current ABI package (it changes with security updates).
pkg=$(apt-cache "${apt_opts[@]}" depends "$meta" |
	sed -n -E 's/^ *Depends: (linux-image-[0-9][^ ]*).*/\1/p' | grep -v -- '-unsigned$' | head -n 1)
if [ -z "$pkg" ]; then
	echo "fetch-kernel.sh: no kernel package behind $meta in $suite" >&2
	exit 1
fi
pkgs=("$pkg")
# Ubuntu's image package holds the kernel only: its modules come in two more.
[ "$distro" = debian ] || pkgs+=("${pkg/-image-/-modules-}" "${pkg/-image-/-modules-extra-}")
(cd "$dir/debs" && apt-get "${apt_opts[@]}" -qq download "${pkgs[@]}")
rm -rf "$dir/root"
for p in "${pkgs[@]}"; do
	dpkg -x "$dir"/debs/"$p"_*.deb "$dir/root"
done
# bullseye and bookworm keep modules in /lib/modules, trixie in /usr/lib/modules.
moddir=$(find "$dir/root" -maxdepth 4 -type d -path '*/lib/modules/*' | head -n 1)
release=$(basename "$moddir")
rm -rf "${dir:?}/lib"
mkdir -p "$dir/lib/modules"
mv "$moddir" "$dir/lib/modules/$release"
vmlinuz=$(find "$dir/root/boot" -name 'vmlinu*' | head -n 1)
mv "$vmlinuz" "$dir/vmlinuz"
rm -rf "$dir/root" "$dir/debs" "$apt_dir"
depmod -b "$dir" "$release"
echo "$release" >"$dir/release"
echo "fetch-kernel.sh: $name is $release (${pkgs[*]})"
