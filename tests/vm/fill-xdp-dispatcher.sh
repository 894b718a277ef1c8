#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run in an x86 guest before its tests (tests/vm/run.sh): fills the kernel's XDP dispatcher
# with idle programs, so that it is never rewritten while the tests run.
#
# The kernel calls XDP programs through a dispatcher, a function it rewrites (with int3
# breakpoints and IPIs) whenever a program starts or stops being attached somewhere. Under
# qemu's multi-threaded TCG that rewrite, while another vCPU runs the dispatcher, locks 5.10
# up and oopses 6.12 (tests/vm/xdp-swap-lockup.sh; docs/testing.md): an emulation fault, not
# one a real CPU has. The dispatcher has room for 48 programs and leaves any beyond those
# to an indirect call, without a rewrite; so with 64 programs attached here first, the
# tests' attaches and detaches never touch it. Their programs then run by the indirect
# call: the same program, the same verdicts.
#
#   fill-xdp-dispatcher.sh XDP_OBJECT
set -u
obj=${1:?usage: fill-xdp-dispatcher.sh XDP_OBJECT}
ns=fp-xdp-dispatcher-fill
ip netns add "$ns" || exit 1
# Each "link set ... obj" loads the object again: 64 distinct programs. In batches: a
# process started over 9p costs the guest most of a second.
links=$(mktemp) progs=$(mktemp)
trap 'rm -f "$links" "$progs"' EXIT
for i in $(seq 32); do
	echo "link add fill${i}a type veth peer name fill${i}b" >>"$links"
	echo "link set dev fill${i}a xdpdrv obj $obj sec xdp" >>"$progs"
	echo "link set dev fill${i}b xdpdrv obj $obj sec xdp" >>"$progs"
done
ip -n "$ns" -batch "$links" && ip -n "$ns" -batch "$progs"
