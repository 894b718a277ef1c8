#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Cross-builds the command and fp-test for a router architecture with Debian's cross
# compiler, against a sysroot of Debian's packages of that architecture (fetched once into
# build/sysroot-ARCH): build/ARCH/xdp-fastpath, fp-test, fp-udp (the end-to-end tests'
# UDP endpoint), and the command line's fuzz target as a replayer with its seed writer. The BPF object in them
# is in the target's byte order (big-endian for s390x, as for ath79's MIPS).
#
#   tests/cross/build.sh ARCH     ARCH: arm64, armhf, mipsel or s390x
set -euo pipefail
cd "$(dirname "$0")/../.."

arch=${1:?usage: tests/cross/build.sh arm64|armhf|mipsel|s390x}
case "$arch" in
arm64) triplet=aarch64-linux-gnu ;;
armhf) triplet=arm-linux-gnueabihf ;;
mipsel) triplet=mipsel-linux-gnu ;;
s390x) triplet=s390x-linux-gnu ;;
*)
	echo "tests/cross/build.sh: no cross build for '$arch' (arm64, armhf, mipsel or s390x)" >&2
	exit 2
	;;
esac
if ! command -v "$triplet-gcc" >/dev/null; then
	echo "tests/cross/build.sh: $triplet-gcc is missing (Debian: gcc-$triplet)" >&2
	exit 2
fi
sysroot=build/sysroot-$arch
packages=(libbpf-dev libbpf1 libelf-dev libelf1 zlib1g-dev zlib1g libmnl-dev libmnl0
	libnetfilter-conntrack-dev libnetfilter-conntrack3 libnfnetlink-dev libnfnetlink0)
# Fetched again when the list changes, as tests/vm/make-root.sh does.
if [ "$(cat "$sysroot/.complete" 2>/dev/null)" != "$arch ${packages[*]}" ]; then
	rm -rf "$sysroot"
	scripts/debian-extract.sh "$arch" "$sysroot" "${packages[@]}"
	echo "$arch ${packages[*]}" >"$sysroot/.complete"
fi
make --no-print-directory -j"$(nproc)" CROSS_COMPILE="$triplet-" SYSROOT="$sysroot" \
	BUILD="build/$arch" "build/$arch/xdp-fastpath" "build/$arch/fp-test" "build/$arch/fp-udp" \
	"build/$arch/fuzz-cli-replay" "build/$arch/fuzz/fp-fuzz-seeds"
