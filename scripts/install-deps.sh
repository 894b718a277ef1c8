#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Installs what xdp-fastpath needs to build and to run its tests, on Debian 12 (bookworm).
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run as root (it uses apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	make gcc libc6-dev pkg-config clang llvm libclang-rt-14-dev \
	libbpf-dev bpftool libelf-dev zlib1g-dev \
	libmnl-dev libnetfilter-conntrack-dev \
	iproute2 nftables conntrack ethtool iputils-ping procps util-linux \
	socat jq pv bc iperf3 gnuplot-nox systemd \
	qemu-system-x86 busybox-static kmod cpio xz-utils ppp pppoe \
	qemu-system-misc qemu-system-arm qemu-system-mips qemu-user-static file \
	gcc-s390x-linux-gnu gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf gcc-mipsel-linux-gnu \
	libc6-dev-s390x-cross libc6-dev-arm64-cross libc6-dev-armhf-cross \
	libc6-dev-mipsel-cross >/dev/null
echo "install-deps.sh: done"
