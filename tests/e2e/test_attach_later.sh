#!/bin/bash
# A port attached to a running instance: connections the daemon offloaded one way only,
# because the other way's interface was not attached then, are completed once it is. That
# is also what happens to a connection whose events arrive right after attach adds a port,
# before the daemon has re-read its copy of the ports (it was offloaded one way, and stayed
# so, when test_link_delete re-created and re-attached r0).
. "$(dirname "$0")/testbed.sh"
tb_setup
fastpath attach r1 --log-file "$TB_TMP/daemon.log" >/dev/null || exit 1
tb_udp_server 6000
ip netns exec "$TB_CLI" "$FP_UDP" client 198.19.2.2 6000 100000000 >/dev/null & # $! is the client
client=$!
TB_PIDS+=($client)
one_way() { [ "$(tb_flow_entries)" = 1 ]; }
check "with only r1 attached, the conversation is offloaded one way (from r1)" tb_wait 5 one_way
check "... keyed on r1" eq "$(fastpath flows --json | jq -r '.[].in')" r1

# The tables' size is fixed: another --flows for r0 is refused, and r0 stays unattached.
flows=$(tb_status | jq .max_flows)
check "attaching r0 with another --flows is refused" \
	tb_expect_error 1 "have $flows entries.*detach every interface to change --flows" \
	fastpath attach r0 --flows $((flows * 2))
check "... and changes nothing" eq "$(tb_status | jq -c '[.interfaces[].name]')" '["r1"]'
fastpath attach r0 --flows "$flows" >/dev/null || exit 1
both_ways() { [ "$(tb_flow_entries)" = 2 ]; }
check "once r0 is attached too, the daemon offloads the other way (within a scan)" \
	tb_wait 3 both_ways
sleep 0.5
packets() { fastpath flows --json | jq -r "[.[] | select(.in == \"$1\") | .packets] | add"; }
p0=$(packets r0)
p1=$(packets r1)
sleep 1
check "... and the fastpath carries both ways" \
	eval '[ "$(packets r0)" -gt "$p0" ] && [ "$(packets r1)" -gt "$p1" ]'
kill "$client"
wait "$client" 2>/dev/null
tb_udp_server 6001
check "a conversation after the attach echoes intact" cli "$FP_UDP" client 198.19.2.2 6001 500
check "... offloaded both ways" tb_wait 5 eval '[ "$(fastpath flows --json |
	jq "[.[] | select(.dst == \"198.19.2.2:6001\" or .src == \"198.19.2.2:6001\")] | length")" = 2 ]'
tb_done
