#!/bin/bash
# The server's MAC address changes in the middle of an offloaded conversation (a replaced
# box, a VRRP failover): once the router's neighbour entry has the new address, the flow's
# cached next hop is refreshed and the fastpath sends to the new MAC. The server's veth
# accepts only frames to its own address, so a stale next hop would lose every datagram.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
tb_udp_server 6000
tb_share_start
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/client.out"
offloaded() { [ "$(tb_flow_entries)" = 2 ]; }
check "a long conversation is offloaded" tb_wait 5 offloaded
sleep 0.5
gen0=$(tb_status | jq .nexthop_generation)
fwd0=$(tb_stat forwarded)

new_mac=02:00:5e:10:00:99
ip -n "$TB_SRV" link set s0 address "$new_mac"
ip -n "$TB_RTR" neigh replace 198.19.2.2 lladdr "$new_mac" dev r1 nud reachable
check "(the change came while the conversation ran)" tb_udp_conversation_running
gen_bumped() { [ "$(tb_status | jq .nexthop_generation)" -gt "$gen0" ]; }
check "the neighbour change bumps the next-hop generation" tb_wait 3 gen_bumped

check "the fastpath carries it after the change" tb_wait 10 eval \
	'ge "$(tb_stat forwarded)" $((fwd0 + 1000))'
check "the conversation completes intact across the change" tb_udp_conversation_end
tb_log "  client: $(cat "$TB_TMP/client.out")"
check "... losing little at the switch (< 500 resends)" \
	ge 500 "$(sed -n 's/.*resent \([0-9]*\).*/\1/p' "$TB_TMP/client.out")"
check "... the fastpath carried >= 90% of it" tb_share_at_least 90
tb_done
