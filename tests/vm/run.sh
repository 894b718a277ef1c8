#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs a command in a qemu guest booted with one of the kernels routers and distributions ship,
# and exits with the command's exit status.
#
#   tests/vm/run.sh KERNEL COMMAND [ARG...]
#
# KERNEL is 5.10, 5.15, 6.1 or 6.12 (Debian's kernel packages, Ubuntu's for 5.15, fetched by
# fetch-kernel.sh into build/vm/, or VM_DIR). The guest's root filesystem is this machine's,
# shared read-only over 9p under a tmpfs overlay: every binary built here and every package
# installed here is there, and what the guest writes is lost when it stops. The command runs
# as root in the current directory. KVM does not work in this sandbox: qemu emulates (TCG),
# about 100x slower than here for bulk data, so tests in guests move little data.
#
# With VM_ARCH=s390x the guest is big-endian (Debian's s390x kernel, qemu-system-s390x): its
# root is a directory of Debian's s390x packages (make-root.sh), this machine's root is
# under /host there, and the command runs in /host/<current directory>; what it runs must be
# built for s390x (tests/cross/run.sh).
#
# With VM_ARCH=armhf the guest is 32-bit ARM (Debian's armmp kernel on qemu's virt board,
# ARMv7 cores), the same way; with VM_ARCH=mipsel 32-bit little-endian MIPS (Debian's Malta
# kernel on qemu's Malta board, one 74Kf core and 256 MiB, what that kernel can address).
#
# Environment: VM_DIR (build/vm), VM_ARCH (amd64), VM_BPF_JIT (1: the guest's
# net.core.bpf_jit_enable; 0 leaves BPF to the interpreter where the kernel lets the JIT be
# off), VM_MEM (3G), VM_CPUS (2), VM_ACCEL (tcg,thread=multi; tcg,thread=single runs the
# vCPUs in turn, on one thread), VM_TIMEOUT (seconds, 1800), VM_SILENCE (seconds, 180: see
# below), VM_LOG (also write the console to this file), VM_FILL_XDP_DISPATCHER (1: an x86
# guest's XDP dispatcher is filled before the command, fill-xdp-dispatcher.sh says why; 0
# leaves it, as xdp-swap-lockup.sh needs to show the fault).
#
# The guest says it is alive every 10 s (guest-init.sh prints "fp-vm-heartbeat UPTIME" on its
# console, left out of what this prints); one whose console stays silent for VM_SILENCE
# seconds is stopped, and this exits 124 saying it went silent. A frozen guest (once, in CI,
# the MIPS one: no line in 30 minutes, not even a watchdog's) then costs 3 minutes, not
# VM_TIMEOUT.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kernel=${1:?usage: tests/vm/run.sh KERNEL COMMAND [ARG...]}
shift
[ $# -gt 0 ] || {
	echo "usage: tests/vm/run.sh KERNEL COMMAND [ARG...]" >&2
	exit 2
}
vm_dir=$(realpath -m "${VM_DIR:-$here/../../build/vm}")
arch=${VM_ARCH:-amd64}
mem=${VM_MEM:-3G} cpus=${VM_CPUS:-2}
# Malta's kernel has no high memory, and the board runs one core unless it is a multi-threaded one.
[ "$arch" = mipsel ] && mem=${VM_MEM:-256M} cpus=${VM_CPUS:-1}
export VM_ARCH=$arch
# Guests that start side by side (tests/vm/matrix.sh) fetch and build what they share in turn.
mkdir -p "$vm_dir"
exec {prepare_lock}>"$vm_dir/.prepare.lock"
flock "$prepare_lock"
"$here/fetch-kernel.sh" "$kernel" "$vm_dir"
kdir=$vm_dir/$kernel
guest_root='' host_prefix=''
if [ "$arch" != amd64 ]; then
	kdir=$vm_dir/$kernel-$arch
	guest_root=$vm_dir/root-$arch
	host_prefix=/host
	"$here/make-root.sh" "$arch" "$guest_root"
fi
release=$(cat "$kdir/release")
initrd=$kdir/initrd.img
[ -s "$initrd" ] && [ "$initrd" -nt "$here/make-initrd.sh" ] ||
	"$here/make-initrd.sh" "$kdir" "$release" "$initrd" "$guest_root"
exec {prepare_lock}>&-

work=$(mktemp -d "$vm_dir/run.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
{
	printf 'cd %q || exit 125\n' "$host_prefix$PWD"
	# What the tests read from the environment goes along.
	for var in $(compgen -e | grep -E '^(FP_|FUZZ_|CHURN_|TEST_|E2E_|CI$)' || true); do
		printf 'export %s=%q\n' "$var" "${!var}"
	done
	printf 'export FP_VM_KERNEL=%q\n' "$kernel"
	# Debian's 32-bit ARM and MIPS kernels leave their JIT off (the 64-bit ones have it
	# always on).
	printf 'sysctl -qw net.core.bpf_jit_enable=%q 2>/dev/null\n' "${VM_BPF_JIT:-1}"
	if [ "$arch" = amd64 ] && [ "${VM_FILL_XDP_DISPATCHER:-1}" = 1 ]; then
		xdp_obj=$(realpath -m "$here/../../build/xdp_pass.bpf.o")
		printf '%q %q || echo "run.sh: the XDP dispatcher is not filled" >&2\n' \
			"$here/fill-xdp-dispatcher.sh" "$xdp_obj"
	fi
	printf 'exec'
	printf ' %q' "$@"
	printf '\n'
} >"$work/cmd"

console=$work/console
timeout_s=${VM_TIMEOUT:-1800}
share=security_model=none,readonly=on
case "$arch" in
amd64)
	machine=(qemu-system-x86_64 -cpu max -serial stdio)
	tty=ttyS0
	;;
s390x)
	# shellcheck disable=SC2054 # qemu's options hold commas
	machine=(qemu-system-s390x -M s390-ccw-virtio -cpu max -chardev stdio,id=console
		-device sclpconsole,chardev=console
		-virtfs "local,path=$guest_root,mount_tag=guestroot,$share,multidevs=remap")
	tty=ttysclp0
	;;
armhf)
	# A board of ARMv7 cores, as ipq40xx and mvebu routers have; its PCIe below 4 GiB,
	# where a kernel without LPAE finds it.
	# shellcheck disable=SC2054 # qemu's options hold commas
	machine=(qemu-system-arm -M virt,highmem=off -cpu cortex-a15 -serial stdio
		-virtfs "local,path=$guest_root,mount_tag=guestroot,$share,multidevs=remap")
	tty=ttyAMA0
	;;
mipsel)
	# A MIPS32r2 core as ath79's and ramips' routers have (74Kc; this one with an FPU, which
	# Debian's mipsel userland is built for).
	# shellcheck disable=SC2054 # qemu's options hold commas
	machine=(qemu-system-mipsel -M malta -cpu 74Kf -serial stdio
		-virtfs "local,path=$guest_root,mount_tag=guestroot,$share,multidevs=remap")
	tty=ttyS0
	;;
*)
	echo "tests/vm/run.sh: no guest for VM_ARCH=$arch (amd64, s390x, armhf or mipsel)" >&2
	exit 2
	;;
esac
silence_s=${VM_SILENCE:-180}
# Stops the guest (through timeout, PID) once its console has been silent for silence_s.
watch_console() { # PID
	local quiet
	while sleep 10; do
		kill -0 "$1" 2>/dev/null || return 0
		quiet=$(($(date +%s) - $(stat -c %Y "$console")))
		if [ "$quiet" -ge "$silence_s" ]; then
			touch "$work/silent"
			kill -TERM "$1"
			return 0
		fi
	done
}
set +e
{
	timeout --foreground -k 10 "$timeout_s" "${machine[@]}" \
		-accel "${VM_ACCEL:-tcg,thread=multi}" -smp "$cpus" -m "$mem" \
		-no-reboot -nodefaults -display none -monitor none \
		-kernel "$kdir/vmlinuz" -initrd "$initrd" \
		-append "console=$tty quiet loglevel=1 panic=-1 fp_release=$release fp_cmd=$host_prefix$work/cmd" \
		-virtfs "local,path=/,mount_tag=hostroot,$share,multidevs=remap" \
		-virtfs "local,path=$kdir/lib/modules/$release,mount_tag=modules,$share" \
		</dev/null &
	guest=$!
	watch_console "$guest" >/dev/null &
	wait "$guest"
} | sed -u 's/\r$//' | tee "$console" ${VM_LOG:+"$VM_LOG"} |
	grep --line-buffered -v '^fp-vm-heartbeat '
qemu_status=${PIPESTATUS[0]}
set -e
status=$(sed -n -E 's/^fp-vm-exit-status: ([0-9]+)$/\1/p' "$console" | tail -n 1)
if [ -z "$status" ]; then
	if [ -e "$work/silent" ]; then
		echo "tests/vm/run.sh: the $kernel guest went silent (no line on its console in ${silence_s}s)" >&2
	elif [ "$qemu_status" = 124 ]; then
		echo "tests/vm/run.sh: the $kernel guest did not finish within ${timeout_s}s" >&2
	else
		echo "tests/vm/run.sh: the $kernel guest stopped without an exit status (qemu: $qemu_status)" >&2
	fi
	exit 124
fi
exit "$status"
