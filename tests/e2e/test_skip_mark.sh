#!/bin/bash
# --skip-mark: connections whose conntrack mark matches stay on the kernel path (multi-WAN
# and shapers rely on it); the others are offloaded.
. "$(dirname "$0")/testbed.sh"
tb_setup
# Mark connections to port 6001 with 0x10 (as mwan3 marks a policy), keep other bits free.
rtr nft add chain inet fw policy_mark '{ type filter hook prerouting priority mangle; }'
rtr nft add rule inet fw policy_mark udp dport 6001 ct mark set ct mark or 0x10
tb_attach --skip-mark 0x10/0xf0 || exit 1
tb_udp_server 6000
tb_udp_server 6001
check "datagrams to the unmarked port arrive" cli "$FP_UDP" client 198.19.2.2 6000 500
check "datagrams to the marked port arrive" cli "$FP_UDP" client 198.19.2.2 6001 500
conn_flows() { # PORT: flow entries of the connection to the server's PORT
	fastpath flows --json |
		jq "[.[] | select(.dst == \"198.19.2.2:$1\" or .src == \"198.19.2.2:$1\")] | length"
}
check "the unmarked connection is offloaded" tb_wait 5 eval '[ "$(conn_flows 6000)" = 2 ]'
# Two scans later the daemon has read every event of the marked one, and refused it.
tb_wait_scans 2 10
check "the marked connection is not" eq "$(conn_flows 6001)" 0
tb_done
