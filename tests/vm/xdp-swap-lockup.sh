#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A kernel check, without xdp-fastpath: does attaching and detaching an XDP program while
# other XDP programs run break the kernel? In qemu guests (TCG), Debian 11's 5.10 locks up
# within a minute (a CPU spins at the entry of the XDP dispatcher, bpf_dispatcher_xdp_func,
# which the kernel rewrites on every XDP attach and detach), Debian 13's 6.12 dies at once
# with "Oops: int3" there, Debian 12's 6.1 ran 1048 swaps in 4 minutes. Likely qemu's
# emulation of cross-modifying code; see docs/testing.md. Not part of make test: it kills
# those guests.
#
#   VM_FILL_XDP_DISPATCHER=0 tests/vm/run.sh 5.10 tests/vm/xdp-swap-lockup.sh [SECONDS]
#                           (root; default 240; with the dispatcher filled, as tests/vm/run.sh
#                           does by default, 5.10 ran the loop 150 s unharmed)
set -u
cd "$(dirname "$0")/../.." || exit 2
seconds=${1:-240}
prog=build/xdp_pass.bpf.o
[ -s "$prog" ] || {
	echo "xdp-swap-lockup.sh: $prog is missing (make)" >&2
	exit 2
}
a=fpswap$$a b=fpswap$$b
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null
	ip netns del "$a" 2>/dev/null
	ip netns del "$b" 2>/dev/null
	ip link del fpswapx 2>/dev/null
}
trap cleanup EXIT
# XDP traffic: a ping flood each way over a veth pair with a pass-all program on both ends.
ip netns add "$a" && ip netns add "$b" || exit 2
ip link add va netns "$a" type veth peer name vb netns "$b"
ip -n "$a" addr add 198.18.9.1/24 dev va
ip -n "$b" addr add 198.18.9.2/24 dev vb
ip -n "$a" link set va up
ip -n "$b" link set vb up
ip -n "$a" link set dev va xdpdrv obj "$prog" sec xdp
ip -n "$b" link set dev vb xdpdrv obj "$prog" sec xdp
ip netns exec "$a" ping -f -q -s 1000 198.18.9.2 >/dev/null &
ip netns exec "$b" ping -f -q -s 1000 198.18.9.1 >/dev/null &
# Meanwhile, the same program attached to and detached from an unrelated veth, again and again.
ip link add fpswapx type veth peer name fpswapy
ip link set fpswapx up
ip link set fpswapy up
sleep 2
end=$((SECONDS + seconds))
n=0
while [ $SECONDS -lt $end ]; do
	ip link set dev fpswapx xdpdrv obj "$prog" sec xdp
	ip link set dev fpswapx xdpdrv off
	n=$((n + 1))
	[ $((n % 100)) = 0 ] && [ -w /dev/kmsg ] && echo "<4>xdp-swap-lockup: $n swaps" >/dev/kmsg
done
echo "xdp-swap-lockup: $n swaps in $seconds s, no lockup"
