#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Makes the initramfs of a qemu guest (see run.sh): busybox, the modules that reach the host's
# root filesystem (virtio, 9p, overlayfs) in dependency order, and a first-stage init that
# mounts it and switches to tests/vm/guest-init.sh.
#
#   tests/vm/make-initrd.sh KERNEL_DIR RELEASE OUTPUT [GUEST_ROOT]
#
# With GUEST_ROOT (a guest of another architecture, see make-root.sh), the guest's root is
# that directory (shared as "guestroot") and this machine's root is under /host in it.
set -euo pipefail

kdir=$(realpath "$1")
release=$2
out=$3
guest_root=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
busybox=/bin/busybox # busybox-static: the initramfs has no libc
[ -z "$guest_root" ] || busybox=$guest_root/bin/busybox

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,dev,proc,sys,lower,upper,newroot,mods}
cp "$busybox" "$tmp/bin/busybox"

# Each module once, dependencies first; busybox's insmod takes uncompressed modules only.
: >"$tmp/mods/order"
for mod in virtio_pci 9pnet_virtio 9p overlay; do
	modprobe -d "$kdir" -S "$release" --show-depends "$mod" | while read -r cmd path _; do
		[ "$cmd" = insmod ] || continue
		name=$(basename "$path")
		name=${name%.xz}
		name=${name%.zst}
		grep -qx "$name" "$tmp/mods/order" && continue
		case "$path" in
		*.xz) xz -dc "$path" >"$tmp/mods/$name" ;;
		*.zst) zstd -qdc "$path" >"$tmp/mods/$name" ;;
		*) cp "$path" "$tmp/mods/$name" ;;
		esac
		echo "$name" >>"$tmp/mods/order"
	done
done

lower_tag=hostroot host_mount=: host_prefix='' suid='' overlay_opts=''
# qemu's 9p server answers with this machine's error numbers, which MIPS numbers otherwise:
# its "not supported" for an extended attribute is MIPS's "not a socket", which the kernel
# takes for a real error. So overlayfs keeps its own attributes in the user namespace
# (those 9p has) and no file is set-user-ID (then exec reads no capabilities; the tests
# run as root and need none).
if [ "${VM_ARCH:-}" = mipsel ]; then
	suid=,nosuid
	overlay_opts=$suid,userxattr
fi
if [ -n "$guest_root" ]; then
	lower_tag=guestroot host_prefix=/host
	host_mount="mount -t 9p -o \$opts,ro,cache=loose$suid hostroot /newroot/host"
fi

cat >"$tmp/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in \$(cat /mods/order); do insmod /mods/\$m 2>/dev/null; done
# Built in on some kernels, modules on others: whatever is missing shows in the mounts below.
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o \$opts,ro,cache=loose $lower_tag /lower || { echo "init: no 9p root"; echo o >/proc/sysrq-trigger; sleep 60; }
mount -t tmpfs -o size=2G tmpfs /upper
mkdir -p /upper/rw /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/rw,workdir=/upper/work$overlay_opts /newroot
mkdir -p /newroot/lib/modules/$release
mount -t 9p -o \$opts,ro modules /newroot/lib/modules/$release
$host_mount
umount /proc /sys /dev 2>/dev/null
exec switch_root /newroot $host_prefix$here/guest-init.sh
INIT
chmod +x "$tmp/init"
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
