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
check "5000 datagrams echoed intact" cli "$FP_UDP" client 198.19.2.2 6000 5000
check "the fastpath carried >= 90% of the packets, from r0 to r1 and back, as skbs" \
	tb_share_at_least 90
check "... none passed for an egress that takes no XDP frames" \
	eq "$(tb_stat pass_egress_not_attached)" 0
tb_done
