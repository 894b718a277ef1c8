#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Makes the root filesystem of a guest of another architecture than this machine's (the
# big-endian s390x guest, the 32-bit ARM one): Debian's packages of that architecture,
# unpacked (not installed), with what the tests run there: fp-test's iproute2 and ethtool,
# the end-to-end testbed's tools (nft, conntrack, socat, jq, pv, ping, bpftool and the usual
# coreutils, util-linux, procps), busybox for the rest, and the libraries the cross-built
# programs link. Checks that every library those programs need is there.
#
#   tests/vm/make-root.sh ARCH DIR
set -euo pipefail

arch=${1:?usage: make-root.sh ARCH DIR}
dir=$(realpath -m "${2:?usage: make-root.sh ARCH DIR}")
here=$(cd "$(dirname "$0")" && pwd)
packages=(libc6 libgcc-s1 libatomic1 bash libtinfo6 dash busybox-static netbase
	iproute2 libbsd0 libmd0 libcap2 libxtables12 ethtool
	libbpf1 libelf1 zlib1g libmnl0 libnetfilter-conntrack3 libnfnetlink0
	coreutils libacl1 libattr1 libgmp10 libpcre2-8-0 libselinux1 grep sed findutils
	gawk libmpfr6 libreadline8 libsigsegv2
	util-linux libblkid1 libcap-ng0 libmount1 libsmartcols1 libudev1 libuuid1 libaudit1
	procps libproc2-0 libsystemd0 libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1
	libncursesw6
	nftables libnftables1 libnftnl11 libjansson4 libedit2 conntrack
	socat libssl3 libwrap0 libnsl2 libtirpc3 libgssapi-krb5-2 libkrb5-3 libk5crypto3
	libcom-err2 libkrb5support0 libkeyutils1
	jq libjq1 libonig5 pv iputils-ping libidn2-0 libunistring2 kmod libkmod2 bpftool)
# Made again when this list changes.
[ "$(cat "$dir/.complete" 2>/dev/null)" = "$arch ${packages[*]}" ] && exit 0
rm -rf "$dir"
"$here/../../scripts/debian-extract.sh" "$arch" "$dir" "${packages[@]}"

# /bin/sh is dash, as on Debian: a busybox sh runs its own applets before the programs of
# the same name (its ip, not iproute2's).
ln -sfn dash "$dir/bin/sh"
# busybox for every tool no package gave (mount, sysctl, nsenter, modprobe, ...); the
# applets are those of this machine's busybox-static, the same Debian version.
for applet in $(busybox --list-full); do
	name=$(basename "$applet")
	for d in bin sbin usr/bin usr/sbin; do
		[ -e "$dir/$d/$name" ] && continue 2
	done
	mkdir -p "$dir/$(dirname "$applet")"
	ln -s /bin/busybox "$dir/$applet"
done
mkdir -p "$dir"/{proc,sys,dev,run,tmp,host,root,lib/modules,sys/fs/bpf}
chmod 1777 "$dir/tmp"

# Every library the programs that run there need, found in the root (by soname).
needs() { readelf -d "$1" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
missing=0
todo=()
for prog in bash dash ip tc ss ethtool nft conntrack socat jq pv ping gawk timeout nsenter pgrep \
	sysctl kmod bpftool; do
	found=$(find "$dir/bin" "$dir/sbin" "$dir/usr/bin" "$dir/usr/sbin" -name "$prog" -type f | head -n 1)
	todo+=("${found:-$dir/missing/$prog}")
done
seen=" "
libs=$(find "$dir/lib" "$dir/usr/lib" -name '*.so*')
for lib in libbpf.so.1 libmnl.so.0 libnetfilter_conntrack.so.3 libnfnetlink.so.0; do
	todo+=("$(grep -m1 "/$lib\$" <<<"$libs" || echo "$dir/missing/$lib")")
done
while [ ${#todo[@]} -gt 0 ]; do
	file=${todo[0]}
	todo=("${todo[@]:1}")
	if [ ! -e "$file" ]; then
		echo "make-root.sh: $(basename "$file") is missing from the $arch root" >&2
		missing=1
		continue
	fi
	for lib in $(needs "$file"); do
		case "$seen" in *" $lib "*) continue ;; esac
		seen="$seen$lib "
		todo+=("$(grep -m1 "/$lib\$" <<<"$libs" || echo "$dir/missing/$lib")")
	done
done
[ "$missing" = 0 ] || exit 1
echo "$arch ${packages[*]}" >"$dir/.complete"
echo "make-root.sh: $arch root in $dir ($(du -sh "$dir" | cut -f1))"
