#!/bin/bash
# Fastpathed packets never reach conntrack, so the daemon keeps the entry alive while the
# fastpath carries traffic, longer than conntrack's timeout; once traffic stops the entry
# expires as usual and its flows are removed. The timeout changes while the daemon runs,
# which reads it at each scan.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
# Set once the daemon runs: its scans read conntrack's timeouts again each time.
tb_wait_scans 2 5
rtr sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=4

srv timeout 60 socat -u TCP-LISTEN:5003,reuseaddr OPEN:/dev/null &
TB_PIDS+=($!)
tb_wait 5 srv_listening 5003
# A line every 0.3 s for 10 s, then silence with the connection left open.
cli bash -c 'for i in $(seq 33); do echo "line $i"; sleep 0.3; done; sleep 30' |
	cli socat -u - TCP:198.19.2.2:5003 &
TB_PIDS+=($!)
sleep 9
check "after 9 s (timeout 4 s) the conntrack entry is alive" \
	bash -c "ip netns exec $TB_RTR conntrack -L -p tcp --dport 5003 2>/dev/null | grep -q ESTABLISHED"
check "its flows are still offloaded" eq "$(tb_flow_entries)" 2
check "the fastpath carried the lines" ge "$(tb_stat forwarded)" 40
check "the daemon refreshed the conntrack timeout" ge "$(tb_status | jq .refreshed)" 1
expired() { ! ip netns exec "$TB_RTR" conntrack -L -p tcp --dport 5003 2>/dev/null | grep -q .; }
check "once idle, the entry expires" tb_wait 10 expired
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "and its flows are removed" tb_wait 3 no_flows
tb_done
