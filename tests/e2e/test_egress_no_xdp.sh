#!/bin/bash
# An attached port whose driver has no XDP of its own, beside a port in native mode: a
# router's Wi-Fi interface, a USB Ethernet adapter; here a macvlan, which the LAN moves
# to. attach takes the tc hook for it. Frames the WAN port's XDP redirected to it would be
# dropped: it has no ndo_xdp_xmit, and most drivers that have one take frames only while
# an XDP program of theirs runs. From 6.3 the kernel says so; before, the daemon infers it
# from the port running no native XDP. Either way the flows leaving by it from the native
# port go to the kernel, and every connection through it arrives intact, while those
# arriving on it are forwarded at its tc hook.
#
#  cli c0 --- r0 [lan0: macvlan, tc hook]  rtr  r1 (native) --- s0 srv
. "$(dirname "$0")/testbed.sh"
if [ -n "${E2E_MODE:-}" ]; then
	tb_skip "this test chooses each port's hook"
fi
tb_setup
rtr ip link add lan0 link r0 type macvlan mode bridge
rtr ip addr del 198.18.1.1/24 dev r0
rtr ip addr add 198.18.1.1/24 dev lan0
rtr ip link set lan0 up
rtr nft add rule inet fw forward iifname lan0 oifname r1 accept
cli ip neigh flush dev c0
check "the client reaches the server through lan0" cli ping -c1 -W2 198.19.2.2

fastpath attach lan0 r1 --log-file "$TB_TMP/daemon.log" >"$TB_TMP/attach.out" ||
	{ cat "$TB_TMP/attach.out" >&2; exit 1; }
check "lan0 is attached at the tc hook" eq "$(tb_mode_of lan0 | cut -d' ' -f1)" tc
check "... r1 in native mode" eq "$(tb_mode_of r1)" native
unable() {
	[ "$(tb_status | jq -c '[.upper_devices[] | select(.takes_xdp_frames == false) | .name]')" \
		= '["lan0"]' ]
}
check "the daemon sees that lan0 takes no redirected XDP frames (within 3 s)" tb_wait 3 unable
grep -q 'lan0.* redirected XDP frames' "$TB_TMP/daemon.log" ||
	check "... which the daemon logs" false

tb_udp_server 6000
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/client.out"
offloaded() { [ "$(tb_flow_entries)" = 2 ]; }
check "a long conversation is offloaded" tb_wait 10 offloaded
egress0=$(tb_stat pass_egress_not_attached)
replies_passed() { ge "$(tb_stat pass_egress_not_attached)" $((egress0 + 100)); }
check "... its replies go to the kernel at r1 (>= 100 passed for their egress)" \
	tb_wait 5 replies_passed
requests_forwarded() {
	ge "$(fastpath flows --json | jq '[.[] | select(.in == "lan0") | .packets] | add // 0')" 100
}
check "... its requests are forwarded at lan0's tc hook (>= 100 packets)" \
	tb_wait 5 requests_forwarded
check "the conversation completes intact" tb_udp_conversation_end
tb_log "  client: $(cat "$TB_TMP/client.out")"
file=$(tb_random_file 4)
want=$(sha256sum <"$file" | cut -d' ' -f1)
check "4 MB down through lan0 arrive intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "4 MB up arrive intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
tb_done
