#!/bin/bash
# --mode generic: XDP on skbs, for devices whose driver has no native XDP, beside ports in
# native mode. A generic port's redirects are skbs, which any device takes, also a port that
# cannot take redirected XDP frames (on a router, most drivers without native XDP; here a
# veth whose peer has neither GRO nor, before 5.13, an XDP program). With a native port
# attached too, the daemon marks such ports; flows into them from the native port go to the
# kernel, those from a generic port stay on the fastpath.
#
#  cli c0 --- r0 (generic)  rtr  r1 (generic) --- s0 srv      r0, r1: no XDP frames
#                                r3 (native)  --- s1 srv
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_add_second_link
if tb_kernel_older 5 13; then
	cli ip link set dev c0 xdpdrv off
	srv ip link set dev s0 xdpdrv off
else
	cli ethtool -K c0 gro off >/dev/null
	srv ethtool -K s0 gro off >/dev/null
fi
fastpath attach r3 --mode native --log-file "$TB_TMP/daemon.log" >/dev/null || exit 1
fastpath attach r0 r1 --mode generic >/dev/null || exit 1
unable() { [ "$(tb_status | jq -c '[.upper_devices[] | select(.takes_xdp_frames == false) | .name] | sort')" = '["r0","r1"]' ]; }
check "the daemon sees that r0 and r1 take no redirected XDP frames" tb_wait 3 unable

tb_udp_server 6000 "$TB_TMP/udp-server.out"
tb_share_start
check "20000 datagrams echoed intact" cli "$FP_UDP" client 198.19.2.2 6000 20000
check "the fastpath carried >= 90% of the packets, from r0 to r1 and back, as skbs" \
	tb_share_at_least 90
check "... none passed for an egress that takes no XDP frames" \
	eq "$(tb_stat pass_egress_not_attached)" 0

# --steer's cpumap entries run the fastpath, so its cpumap is made to hold programs only for
# an instance loaded with --steer; before 5.15, generic XDP takes no program with such a
# cpumap (which is why it is not made so without --steer).
no_xdp() { ! ip -n "$TB_RTR" link show "$1" | grep -q ' xdp'; }
generic_on() { ip -n "$TB_RTR" link show "$1" | grep -q ' xdpgeneric'; }
fastpath detach >/dev/null
fastpath attach r3 --mode native >/dev/null || exit 1
check "--steer on an instance loaded without it is refused with one line" \
	tb_expect_error 1 "--steer: .* was loaded without it" fastpath attach r0 --steer
check "... and attaches nothing" no_xdp r0
fastpath detach >/dev/null
fastpath attach r3 --mode native --steer >/dev/null || exit 1
if tb_kernel_older 5 15; then
	check "generic beside --steer is refused with one line, naming --steer" \
		tb_expect_error 1 "r0: this kernel's generic XDP does not take --steer's" \
		fastpath attach r0 --mode generic
	check "... and attaches nothing" no_xdp r0
else
	fastpath attach r0 --mode generic >/dev/null
	check "generic beside --steer attaches" generic_on r0
fi
tb_done
