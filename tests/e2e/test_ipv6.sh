#!/bin/bash
# IPv6 is routed (no NAT) through the fastpath: TCP intact, UDP hop limit decremented once.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
file=$(tb_random_file 50)
want=$(sha256sum <"$file" | cut -d' ' -f1)

tb_share_start
check "50 MB over IPv6 arrive intact" eq "$(tb_tcp_transfer "$file" up 2001:2:0:2::2)" "$want"
check "the server sees the client's own address" eq "$(cat "$TB_TMP/peer")" \
	2001:0002:0000:0001:0000:0000:0000:0002
tb_udp_server 6000 "$TB_TMP/udp-server.out"
check "5000 IPv6 datagrams echoed intact" cli "$FP_UDP" client 2001:2:0:2::2 6000 5000
wait "${TB_PIDS[-1]}"
read -r _ peer _ received _ hops <"$TB_TMP/udp-server.out"
check "hop limit decremented exactly once (64 -> 63)" eq "$hops" 63-63
check "IPv6 flows were offloaded" ge "$(tb_status | jq .offload_total)" 1
check "the fastpath carried >= 95% of the packets" tb_share_at_least 95
tb_done
