#!/bin/bash
# An attached interface that disappears: the kernel drops it from the egress map, the daemon
# removes its flows and its link pin, and keeps serving the other interfaces.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
tb_udp_server 6000
cli "$FP_UDP" client 198.19.2.2 6000 100 >/dev/null
check "a connection is offloaded" eq "$(tb_flow_entries)" 2
r0=$(ip -n "$TB_RTR" -o link show r0 | cut -d: -f1)
ip -n "$TB_RTR" link del r0
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "deleting r0 removes its flows" tb_wait 3 no_flows
check "... and its link pin" tb_wait 3 test ! -e "$TB_PIN/link_$r0"
check "... r1 stays attached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
check "... the daemon keeps running" ge "$(tb_daemon_pid)" 1
tb_done
