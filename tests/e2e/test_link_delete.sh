#!/bin/bash
# An attached interface that disappears: the kernel drops it from the egress map, the daemon
# removes its flows and its link pin, and keeps serving the other interfaces. Re-created
# and attached again, it joins the running instance and its traffic is offloaded again.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
tb_udp_server 6000
cli "$FP_UDP" client 198.19.2.2 6000 100 >/dev/null
check "a connection is offloaded" tb_wait 5 eval '[ "$(tb_flow_entries)" = 2 ]'
r0=$(ip -n "$TB_RTR" -o link show r0 | cut -d: -f1)
ip -n "$TB_RTR" link del r0
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "deleting r0 removes its flows" tb_wait 3 no_flows
check "... and its link pin" tb_wait 3 test ! -e "$TB_PIN/link_$r0"
check "... r1 stays attached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
check "... the daemon keeps running" ge "$(tb_daemon_pid)" 1

ip link add c0 netns "$TB_CLI" type veth peer name r0 netns "$TB_RTR"
ip -n "$TB_CLI" addr add 198.18.1.2/24 dev c0
ip -n "$TB_RTR" addr add 198.18.1.1/24 dev r0
ip -n "$TB_CLI" link set c0 up
ip -n "$TB_RTR" link set r0 up
ip -n "$TB_CLI" route add default via 198.18.1.1
cli ethtool -K c0 gro on tso off gso off tx off >/dev/null
tb_veth_takes_redirects "$TB_CLI" c0
pid=$(tb_daemon_pid)
check "the re-created r0 attaches again" fastpath attach r0
check "... to the same daemon" eq "$(tb_daemon_pid)" "$pid"
# A conversation that starts right away is offloaded both ways, and from then on the
# fastpath carries it. (Its share from the first datagram would measure the daemon's
# reaction to a new connection, hundreds of round trips on a loaded machine.)
tb_udp_server 6001
tb_udp_conversation 198.19.2.2 6001 "$TB_TMP/client.out"
two_flows() { eq "$(tb_flow_entries)" 2; }
check "... a conversation started then is offloaded both ways" tb_wait 3 two_flows
tb_share_start
forwarded() { ge "$(($(tb_stat forwarded) - TB_FWD0))" 4000; }
check "... its traffic goes on" tb_wait 20 forwarded
check "... and echoes intact" tb_udp_conversation_end
check "... carried by the fastpath (>= 95%)" tb_share_at_least 95
tb_done
