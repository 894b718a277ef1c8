#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Second stage of a qemu guest's boot (see tests/vm/run.sh): runs as PID 1 on the host's root
# filesystem (9p, read-only, under a tmpfs overlay). Mounts what tests need, runs the command
# named by fp_cmd, prints its exit status in a line the host looks for, and powers off.
# PID 1 must never exit (that panics the kernel), so every path ends in the power-off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# devtmpfs has no /dev/fd, which udev makes on a booted system and bash's <(...) needs.
ln -sfn /proc/self/fd /dev/fd
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts # pppd needs ptys
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=755 tmpfs /run
# /tmp stays the host's (under the overlay, so writes stay in the guest): the command may
# live there, as a CI checkout does.
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /run/netns /var/run
ip link set lo up
hostname fp-guest
# Warnings and worse reach the console (the host's log keeps it; the matrix shows it when a
# guest gives no result). A soft lockup panics, and so ends the guest at once, with its
# stack on the console, instead of at the run's timeout.
sysctl -qw kernel.printk="5 4 1 7" kernel.softlockup_panic=1

# The host stops a guest whose console stays silent (tests/vm/run.sh, VM_SILENCE): alive
# every 10 s, with the guest's uptime.
while sleep 10; do
	echo "fp-vm-heartbeat $(cut -d ' ' -f 1 /proc/uptime)"
done &
heartbeat=$!

status=255
if [ -r "${fp_cmd:-}" ]; then
	bash "$fp_cmd"
	status=$?
else
	echo "guest-init: no command file (fp_cmd='${fp_cmd:-}')"
fi
kill "$heartbeat"
echo "fp-vm-exit-status: $status"
sync
echo o >/proc/sysrq-trigger
# PID 1 must not exit while the power-off runs; an exec racing it over 9p can fail (EIO),
# which is no news.
sleep 60 2>/dev/null
