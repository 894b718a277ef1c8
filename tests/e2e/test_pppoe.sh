#!/bin/bash
# A PPPoE WAN as an ISP hands it out: pppd with its kernel PPPoE plugin in the router, over
# the attached port r1; pppoe-server as the access concentrator in the server's namespace;
# masquerade and MSS clamping on the ppp device, as OpenWrt sets them up. The fastpath strips
# the session header on the way in and pushes it on the way out, to the concentrator's MAC.
# At the end the line reconnects, in a new session on a new ppp0, which the fastpath follows.
#
#  ns cli  c0 198.18.1.2 --- r0 (rtr) r1 ==PPPoE== s0 (srv: pppoe-server)
#                            ppp0 198.19.9.1 <-----> ppp0 198.19.9.2
# Needs the kernel's PPPoE (a module this project's own machine's kernel does not have):
# the kernel matrix (tests/vm/) runs it in guests.
. "$(dirname "$0")/testbed.sh"
tb_setup
# Two sessions: the reconnect at the end gets the other session id (the concentrator reuses
# a freed one last).
tb_pppoe_wan r1 s0 2
# A VLAN on the WAN port beside the session, whose tags the concentrator's veth sends beside
# the frames (VLAN offload, on by default): the tc hook would read them but leave the
# session to the kernel, so auto keeps XDP and says what it leaves.
vlan=$(rtr ip link add link r1 name r1.9 type vlan id 9 2>/dev/null && echo r1.9)
tb_attach || exit 1
[ -n "$vlan" ] && check "auto keeps r1 at XDP for its session, saying r1.9's packets pass" \
	grep -q "^r1: attached (native mode): .*; r1.9's incoming packets pass to the kernel" \
	"$TB_TMP/attach.out"
file=$(tb_random_file "${PPPOE_TEST_MB:-10}")
want=$(sha256sum <"$file" | cut -d' ' -f1)

check "status shows the PPPoE session on r1" eq \
	"$(tb_status | jq -c '.upper_devices[] | select(.name == "ppp0") | [.kind, .port]')" \
	'["pppoe","r1"]'
session=$(tb_status | jq '.upper_devices[] | select(.name == "ppp0") | .session')
check "... with the session id the concentrator gave (pppoe-server counts from 1)" eq "$session" 1
tb_share_start
check "download over PPPoE arrives intact" eq "$(tb_tcp_transfer "$file" down 198.19.9.2)" "$want"
check "the server saw the router's PPP address" eq "$(cat "$TB_TMP/peer")" 198.19.9.1
tb_paced_transfer "$file" up 198.19.9.2 5003 1m "$TB_TMP/up"
up=$TB_PACED
tb_check_conn_flows "flows: keyed by ppp0 from the WAN; towards it, out of r1 in session $session" \
	198.19.9.2:5003 out_pppoe_session "ppp0 r0 0;r0 r1 $session;"
wait $up
check "upload over PPPoE arrives intact" tb_wait 10 eval \
	'[ "$(sha256sum <"$TB_TMP/up" | cut -d" " -f1)" = "$want" ]'
check "the fastpath carried >= 90% of the packets" tb_share_at_least 90
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0

# A PPPoE WAN port that cannot take redirected XDP frames (here its peer has neither GRO nor
# an XDP program; on a router, a driver without native XDP). The tc hook would leave PPPoE
# to the kernel, so auto attaches generic XDP there: downloads stay on the fastpath.
fastpath detach >/dev/null
if tb_kernel_older 5 13; then
	srv ip link set dev s0 xdpdrv off
else
	srv ethtool -K s0 gro off >/dev/null
fi
tb_attach || exit 1
r1_hook() { tb_status | jq -r ".interfaces[] | select(.name == \"r1\") | .$1"; }
check "auto attaches r1 in generic mode" eq "$(r1_hook mode)" generic
check "... for its PPPoE session, it says" eval '[[ "$(r1_hook hook_why)" == *PPPoE* ]]'
tb_check_pppoe_download "$file" 5004 "over PPPoE"

# A router without native XDP at all: the LAN port at the tc hook, which pushes the session
# header onto a packet (an aggregate stays with the kernel), the WAN in generic mode.
fastpath detach >/dev/null
fastpath attach r0 --mode tc --log-file "$TB_TMP/daemon.log" >/dev/null || exit 1
fastpath attach r1 --mode generic >/dev/null || exit 1
# The daemon learns of r1 and the session above it a moment after the attach; until then
# the session's frames pass (pass_pppoe: 7 of them once, in the 6.1 guest).
ppp0_on_r1() {
	eq "$(tb_status | jq -c '.upper_devices[] | select(.name == "ppp0") | [.kind, .port]')" \
		'["pppoe","r1"]'
}
check "the daemon has the PPPoE session on r1 again" tb_wait 5 ppp0_on_r1
tb_udp_server 6000
tb_share_start
pppoe_before=$(tb_stat pass_pppoe)
check "LAN at the tc hook, WAN generic: 5000 datagrams over PPPoE echoed intact" \
	cli "$FP_UDP" client 198.19.9.2 6000 5000 "$TB_SETTLE_MS"
check "... the fastpath carried >= 90% of the packets, both ways" tb_share_at_least 90
# A complete checksum that happens to equal the pseudo-header's sum (1 in 65536: 5000
# datagrams from a random port meet one 7% of the time) is taken for partial and passes.
check "... none of them passed for PPPoE (at most 2 complete checksums taken for partial)" \
	le "$(($(tb_stat pass_pppoe) - pppoe_before))" 2

# The client sending with checksum offload: its datagrams reach the tc hook with partial
# checksums, which towards PPPoE stay with the kernel (the skb would reach the egress as
# IP, not PPPoE); the replies, complete, stay on the fastpath.
cli ethtool -K c0 tx on >/dev/null
tb_udp_server 6001 # the last one ended with its client
pppoe_before=$(tb_stat pass_pppoe)
fwd=$(tb_stat forwarded)
check "LAN sending partial checksums: 5000 datagrams over PPPoE echoed intact" \
	cli "$FP_UDP" client 198.19.9.2 6001 5000 "$TB_SETTLE_MS"
check "... those going out left to the kernel (>= 4500 in pass_pppoe)" \
	ge "$(($(tb_stat pass_pppoe) - pppoe_before))" 4500
check "... the replies on the fastpath (>= 4500)" ge "$(($(tb_stat forwarded) - fwd))" 4500
cli ethtool -K c0 tx off >/dev/null

# The session reconnects, as a DSL line does every day: pppd hangs up and dials again,
# and the concentrator hands out a new session id on a new ppp0. Nothing may still go out
# in the old session, which the concentrator would drop.
rtr_pppd() { # its pid: $! above is the shell that runs it
	local pid
	for pid in $(ip netns pids "$TB_RTR"); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pppd ] && echo "$pid"
	done
}
kill $(rtr_pppd)
# Both ends: the concentrator's session has ended once its own pppd has gone.
ppp_down() { ! rtr ip link show ppp0 >/dev/null 2>&1 && ! srv ip link show ppp0 >/dev/null 2>&1; }
check "pppd hung up (ppp0 is gone at both ends)" tb_wait 20 ppp_down
tb_pppd_dial r1 "$TB_TMP/pppd2.log" || { tb_fail "the PPPoE session did not come back"; exit 1; }
new_session() {
	local s
	s=$(tb_status | jq '.upper_devices[] | select(.name == "ppp0") | .session')
	[ -n "$s" ] && [ "$s" != "$session" ]
}
check "status shows the new session on r1 (not $session)" tb_wait 10 new_session
session=$(tb_status | jq '.upper_devices[] | select(.name == "ppp0") | .session')
tb_udp_server 6002
tb_udp_conversation 198.19.9.2 6002 "$TB_TMP/after-reconnect.out"
tb_check_conn_flows "a conversation after it goes out of r1 in the new session $session" \
	198.19.9.2:6002 out_pppoe_session "ppp0 r0 0;r0 r1 $session;"
fwd=$(tb_stat forwarded)
forwarded_500() { TB_QUIET=1 ge $(($(tb_stat forwarded) - fwd)) 500; }
check "... goes on, offloaded (500 packets forwarded within 10 s)" tb_wait 10 forwarded_500
check "... and ends intact" tb_udp_conversation_end
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
tb_done
