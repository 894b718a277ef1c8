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
fastpath flows --json >"$TB_TMP/flows.json"
check "the unmarked connection is offloaded" \
	eq "$(jq '[.[] | select(.dst == "198.19.2.2:6000" or .src == "198.19.2.2:6000")] | length' "$TB_TMP/flows.json")" 2
check "the marked connection is not" \
	eq "$(jq '[.[] | select(.dst == "198.19.2.2:6001" or .src == "198.19.2.2:6001")] | length' "$TB_TMP/flows.json")" 0
tb_done
