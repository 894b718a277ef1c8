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

# A TCP connection over IPv4 and one over IPv6 at once: a scan reads each family's entries.
for port in 5003 5004; do
	srv timeout 60 socat -u TCP6-LISTEN:$port,reuseaddr,ipv6only=0 OPEN:/dev/null &
	TB_PIDS+=($!)
	tb_wait 5 srv_listening $port
done
# A line every 0.3 s for 10 s, then silence with the connection left open.
for to in TCP:198.19.2.2:5003 "TCP6:[2001:2:0:2::2]:5004"; do
	cli bash -c 'for i in $(seq 33); do echo "line $i"; sleep 0.3; done; sleep 30' |
		cli socat -u - "$to" &
	TB_PIDS+=($!)
done
sleep 9
alive() { # FAMILY PORT
	ip netns exec "$TB_RTR" conntrack -L -f "$1" -p tcp --dport "$2" 2>/dev/null |
		grep -q ESTABLISHED
}
check "after 9 s (timeout 4 s) the conntrack entry is alive" alive ipv4 5003
check "... and the IPv6 connection's" alive ipv6 5004
check "their flows are still offloaded" eq "$(tb_flow_entries)" 4
check "the fastpath carried the lines" ge "$(tb_stat forwarded)" 80
check "the daemon refreshed the conntrack timeouts" ge "$(tb_status | jq .refreshed)" 2
expired() { ! ip netns exec "$TB_RTR" conntrack -L -f "$1" -p tcp --dport "$2" 2>/dev/null |
	grep -q .; }
check "once idle, the entries expire" tb_wait 10 expired ipv4 5003
check "... both" tb_wait 3 expired ipv6 5004
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "and its flows are removed" tb_wait 3 no_flows
tb_done
