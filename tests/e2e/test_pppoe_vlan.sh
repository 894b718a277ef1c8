#!/bin/bash
# A PPPoE WAN on a VLAN, as many fibre and DSL ISPs hand it out (VLAN 7, 35...): pppd over
# r1.7, the access concentrator on s0.7. The fastpath, attached to r1, strips the tag and
# the session header on the way in and pushes both on the way out.
# 1. Tags in the frames (no VLAN offload on either end of the wire): auto attaches r1 at
#    native XDP; downloads and uploads on the fastpath.
# 2. A WAN port that cannot take redirected XDP frames (a driver without native XDP): the
#    tc hook would leave PPPoE to the kernel, so auto attaches generic XDP there, as it
#    does for a session on the port itself (test_pppoe).
# 3. VLAN offload on: XDP would see the VLAN's frames untagged, and the tc hook leaves
#    PPPoE to the kernel: neither hook carries the downloads. auto takes the tc hook (as
#    good for the session, better for other VLANs on the port), says that the session
#    stays in the kernel and names the command that turns the offload off; nothing is lost.
#
#  ns cli  c0 198.18.1.2 --- r0 (rtr) r1.7 ==PPPoE== s0.7 (srv: pppoe-server)
#                            ppp0 198.19.9.1 <-------> ppp0 198.19.9.2
# Needs PPPoE and 802.1Q, which this project's own machine's kernel does not have: the
# kernel matrix (tests/vm/) runs it in guests.
. "$(dirname "$0")/testbed.sh"
tb_setup
rtr ip link add link r1 name r1.7 type vlan id 7 2>/dev/null ||
	tb_skip "no 802.1Q VLAN devices in this kernel"
srv ip link add link s0 name s0.7 type vlan id 7
rtr ip link set r1.7 up
srv ip link set s0.7 up
# Tags travel in the frames.
srv ethtool -K s0 rxvlan off txvlan off >/dev/null
rtr ethtool -K r1 rxvlan off txvlan off >/dev/null
tb_pppoe_wan r1.7 s0.7 1
file=$(tb_random_file "${PPPOE_TEST_MB:-10}")
want=$(sha256sum <"$file" | cut -d' ' -f1)

r1_hook() { tb_status | jq -r ".interfaces[] | select(.name == \"r1\") | .$1"; }
ppp0_on_r1_vlan7() {
	TB_QUIET=1 eq "$(tb_status | jq -c \
		'.upper_devices[] | select(.name == "ppp0") | [.kind, .port, .vlan]')" \
		'["pppoe","r1",7]'
}

# 1. Tags in the frames.
tb_reattach tagged || exit 1
check "status shows the PPPoE session on VLAN 7 of r1" tb_wait 5 ppp0_on_r1_vlan7
session=$(tb_status | jq '.upper_devices[] | select(.name == "ppp0") | .session')
[ -z "${E2E_MODE:-}" ] && check "auto attaches r1 at native XDP" eq "$(r1_hook mode)" native
tb_share_start
check "a download over PPPoE on VLAN 7 arrives intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.9.2 5001)" "$want"
check "the server saw the router's PPP address" eq "$(cat "$TB_TMP/peer")" 198.19.9.1
tb_paced_transfer "$file" up 198.19.9.2 5002 1m "$TB_TMP/up"
up=$TB_PACED
tb_check_conn_flows "flows: keyed by ppp0 from the WAN; towards it, out of r1 with tag 7" \
	198.19.9.2:5002 out_vlan "ppp0 r0 0;r0 r1 7;"
tb_check_conn_flows "... in session $session" \
	198.19.9.2:5002 out_pppoe_session "ppp0 r0 0;r0 r1 $session;"
wait $up
check "an upload arrives intact" tb_wait 10 eval \
	'[ "$(sha256sum <"$TB_TMP/up" | cut -d" " -f1)" = "$want" ]'
check "the fastpath carried >= 90% of the packets" tb_share_at_least 90
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
# Under E2E_MODE every port is at that hook, which leaves PPPoE to the kernel.
[ -n "${E2E_MODE:-}" ] && { tb_done; exit; }

# 2. A WAN port that cannot take redirected XDP frames.
if tb_kernel_older 5 13; then
	srv ip link set dev s0 xdpdrv off
else
	srv ethtool -K s0 gro off >/dev/null
fi
tb_reattach unable || exit 1
check "auto attaches r1 in generic mode" eq "$(r1_hook mode)" generic
check "... for the PPPoE session on its VLAN, it says" \
	eval '[[ "$(r1_hook hook_why)" == *PPPoE* ]]'
check "status shows the session on VLAN 7 of r1 again" tb_wait 5 ppp0_on_r1_vlan7
# (What goes out by r1 stays in the kernel: it takes no redirected frames from r0.)
tb_check_pppoe_download "$file" 5003 "over PPPoE on VLAN 7"
srv ethtool -K s0 gro on >/dev/null
tb_veth_takes_redirects "$TB_SRV" s0

# 3. VLAN offload on: the concentrator's veth sends its tags beside the frames.
srv ethtool -K s0 txvlan on >/dev/null
rtr ethtool -K r1 rxvlan on >/dev/null
tb_reattach offload || exit 1
check "auto attaches r1 at the tc hook, saying the session stays in the kernel, and the fix" \
	grep -q "^r1: attached (tc hook, .*r1.7's tags .*; its PPPoE session stays in the kernel at either hook (ip netns exec $TB_SRV ethtool -K s0 txvlan off)" \
	"$TB_TMP/offload.out"
check "status shows the session on VLAN 7 of r1 again" tb_wait 5 ppp0_on_r1_vlan7
tb_share_start
check "a download arrives intact" eq "$(tb_tcp_transfer "$file" down 198.19.9.2 5004)" "$want"
check "... and an upload" eq "$(tb_tcp_transfer "$file" up 198.19.9.2 5005)" "$want"
check "... the kernel carrying the downloads (<= 75% on the fastpath)" \
	le "$(tb_share_percent)" 75
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
tb_done
