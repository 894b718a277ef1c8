#!/bin/bash
# A route changes in the middle of an offloaded conversation: a host route sends the
# server's address over a second link, r3, instead of the connected subnet on r1. The
# daemon bumps the next-hop generation on the rtnetlink event and the datapath looks the
# route up again on the next packet: the flow follows the new route at once, still on the
# fastpath, and arrives intact.
. "$(dirname "$0")/testbed.sh"
tb_setup
# The server answers over s0 whatever link a datagram came in on: its route to the
# router's WAN address is the connected subnet.
tb_add_second_link
fastpath attach r0 r1 r3 --log-file "$TB_TMP/daemon.log" >/dev/null || exit 1

rx_s1() { ip -n "$TB_SRV" -s -j link show s1 | jq '.[0].stats64.rx.packets'; }
tb_udp_server 6000
tb_share_start
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/client.out"
offloaded() { [ "$(tb_flow_entries)" = 2 ]; }
check "a long conversation via r1 is offloaded" tb_wait 5 offloaded
sleep 0.3
s1_before=$(rx_s1)
ip -n "$TB_RTR" route add 198.19.2.2/32 via 198.19.4.2 dev r3
check "(the route changed while the conversation ran)" tb_udp_conversation_running
moved() { [ "$(rx_s1)" -ge $((s1_before + 1000)) ]; }
check "its packets leave through r3 within a second" tb_wait 1 moved
check "the conversation completes intact" tb_udp_conversation_end
tb_log "  client: $(cat "$TB_TMP/client.out")"
check "... the fastpath carried >= 90% of it" tb_share_at_least 90
check "... and its flow entry now names r3" eq \
	"$(fastpath flows --json | jq -r '.[] | select(.in == "r0") | .out')" r3
tb_done
