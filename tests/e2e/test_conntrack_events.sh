#!/bin/bash
# The daemon follows conntrack: connections that existed before it started are picked up by
# its first dump; 'conntrack -D' and 'conntrack -F' take flows out of the fastpath.
. "$(dirname "$0")/testbed.sh"
tb_setup

# Two UDP conversations before the daemon exists (replied, so offloadable).
tb_udp_server 6000
tb_udp_server 6001
cli "$FP_UDP" client 198.19.2.2 6000 10 >/dev/null
cli "$FP_UDP" client 198.19.2.2 6001 10 >/dev/null
tb_attach || exit 1
check "both pre-existing connections are offloaded by the first dump" \
	eq "$(tb_status | jq .offloaded)" 2
check "each has both directions in the flow map" eq "$(tb_flow_entries)" 4

rtr conntrack -D -p udp --orig-port-dst 6000 >/dev/null 2>&1
two_flows() { [ "$(tb_flow_entries)" = 2 ]; }
check "'conntrack -D' removes that connection's flows" tb_wait 2 two_flows
rtr conntrack -F >/dev/null 2>&1
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "'conntrack -F' removes every flow" tb_wait 2 no_flows
check "and the daemon knows" eq "$(tb_status | jq .offloaded)" 0

# A connection that starts while the daemon runs reports its own end (DESTROY event).
tb_udp_server 6002
cli "$FP_UDP" client 198.19.2.2 6002 10 >/dev/null
offloaded_one() { [ "$(tb_status | jq .offloaded)" = 1 ]; }
check "a new connection is offloaded once replied" tb_wait 2 offloaded_one
rtr conntrack -D -p udp --orig-port-dst 6002 >/dev/null 2>&1
check "'conntrack -D' removes it too" tb_wait 2 no_flows
tb_done
