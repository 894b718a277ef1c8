#!/bin/bash
# A full flow table: with room for 8 connections (--flows 16, two entries each), the 9th and
# later stay on the kernel path, counted as table_full; every conversation still arrives
# intact, and once connections end their room is used by new ones.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach --flows 16 || exit 1
for i in $(seq 0 11); do
	tb_udp_server $((7000 + i))
	check "conversation $i echoes intact" cli "$FP_UDP" client 198.19.2.2 $((7000 + i)) 100
done
st=$(tb_status)
tb_log "  status: $(jq -c '{offloaded, flows_ipv4, max_flows, table_full, errors}' <<<"$st")"
check "the table is full: 16 entries" eq "$(jq .flows_ipv4 <<<"$st")" 16
check "... 8 connections offloaded" eq "$(jq .offloaded <<<"$st")" 8
check "... the other 4 counted as table_full (both directions each)" \
	eq "$(jq .table_full <<<"$st")" 8
check "... and no error" eq "$(jq .errors <<<"$st")" 0
check "the daemon keeps running" ge "$(tb_daemon_pid)" 1
# The operator learns it from the log, once a minute at most, with what to do.
full_logged() {
	grep -q 'flow table full (16 entries a family).*raise --flows' "$TB_TMP/daemon.log"
}
check "the daemon logs the full table" tb_wait 3 full_logged
check "... once" eq "$(grep -c 'flow table full' "$TB_TMP/daemon.log")" 1
tb_log "    $(grep 'flow table full' "$TB_TMP/daemon.log")"

# Free the room of four offloaded connections: a new connection is offloaded again.
for i in 0 1 2 3; do
	rtr conntrack -D -p udp --orig-port-dst $((7000 + i)) >/dev/null 2>&1
done
freed() { [ "$(tb_flow_entries)" = 8 ]; }
check "ended connections free their entries" tb_wait 3 freed
# The new connection's first packets go by the kernel until the daemon has offloaded it;
# how long that takes is other tests' business (a stall of a few milliseconds on a busy
# machine is a tenth of a short conversation). Here: it gets the room, then the fastpath
# carries it.
tb_udp_server 7100
tb_udp_conversation 198.19.2.2 7100 "$TB_TMP/conversation"
offloaded_again() { [ "$(tb_flow_entries)" = 10 ]; }
check "a new connection is offloaded into the freed room" tb_wait 3 offloaded_again
tb_share_start
sleep 1
check "... and the fastpath carries it" tb_share_at_least 95
check "... its conversation echoes intact" tb_udp_conversation_end
tb_log "    $(cat "$TB_TMP/conversation")"
tb_done
