#!/bin/bash
# --skip-mark: connections whose conntrack mark matches stay on the kernel path (multi-WAN
# and shapers rely on it); the others are offloaded.
. "$(dirname "$0")/testbed.sh"
UDP=$TB_ROOT/build/fp-udp
tb_setup
# Mark connections to port 6001 with 0x10 (as mwan3 marks a policy), keep other bits free.
rtr nft add chain inet fw policy_mark '{ type filter hook prerouting priority mangle; }'
rtr nft add rule inet fw policy_mark udp dport 6001 ct mark set ct mark or 0x10
tb_attach --skip-mark 0x10/0xf0 || exit 1
for port in 6000 6001; do
	srv "$UDP" server $port >/dev/null &
	TB_PIDS+=($!)
done
tb_wait 5 bash -c "ip netns exec $TB_SRV ss -Hlun 'sport = :6001' | grep -q ."
check "datagrams to the unmarked port arrive" cli "$UDP" client 198.19.2.2 6000 500
check "datagrams to the marked port arrive" cli "$UDP" client 198.19.2.2 6001 500
fastpath flows --json >"$TB_TMP/flows.json"
check "the unmarked connection is offloaded" \
	eq "$(jq '[.[] | select(.dst == "198.19.2.2:6000" or .src == "198.19.2.2:6000")] | length' "$TB_TMP/flows.json")" 2
check "the marked connection is not" \
	eq "$(jq '[.[] | select(.dst == "198.19.2.2:6001" or .src == "198.19.2.2:6001")] | length' "$TB_TMP/flows.json")" 0
tb_done
