#!/bin/bash
# Policy routing, as multi-WAN setups (mwan3) do it: connections to port 6001 get conntrack
# mark 0x10, the mark is copied to their packets, and an ip rule sends marked packets out
# of a second WAN link, r3, masqueraded to its address. The fastpath looks the next hop
# up with the flow's mark (BPF_FIB_LOOKUP_MARK), so an offloaded marked flow leaves where
# the kernel would send it; unmarked flows keep the main table's WAN, r1. Before Linux 6.10
# there is no such lookup, and marked connections stay in the kernel (pass_no_fib_mark),
# which routes them: what routers' kernels do.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_add_second_link
# The server answers from its usual address whichever link a datagram came in on.
ip -n "$TB_SRV" route replace 198.19.4.0/24 dev s1 src 198.19.2.2
ip -n "$TB_RTR" route add 198.19.2.2/32 via 198.19.4.2 dev r3 table 100
ip -n "$TB_RTR" rule add fwmark 0x10/0xf0 lookup 100
rtr nft -f - <<-'NFT'
table inet fw {
	chain policy_mark {
		type filter hook prerouting priority mangle;
		udp dport 6001 ct mark set ct mark or 0x10
		meta mark set ct mark
	}
}
NFT
fastpath attach r0 r1 r3 --log-file "$TB_TMP/daemon.log" >/dev/null || exit 1

rx() { ip -n "$TB_SRV" -s -j link show "$1" | jq '.[0].stats64.rx.packets'; }
fib_mark=$(tb_status | jq .kernel.fib_mark)
for port in 6000 6001; do
	tb_udp_server $port "$TB_TMP/server.$port"
	s0=$(rx s0)
	s1=$(rx s1)
	tb_share_start
	no_fib_mark=$(tb_stat pass_no_fib_mark)
	check "a conversation to port $port echoes intact" \
		cli "$FP_UDP" client 198.19.2.2 $port 3000 "$TB_SETTLE_MS"
	wait "${TB_PIDS[-1]}"
	if [ $port = 6001 ] && [ "$fib_mark" = false ]; then
		check "... left to the kernel without BPF_FIB_LOOKUP_MARK (>= 5400 pass_no_fib_mark)" \
			ge $(($(tb_stat pass_no_fib_mark) - no_fib_mark)) 5400
	else
		check "... carried by the fastpath (>= 90%)" tb_share_at_least 90
	fi
	read -r _ peer _ <"$TB_TMP/server.$port"
	if [ $port = 6001 ]; then
		check "... out of r3, the marked WAN" ge $(($(rx s1) - s1)) 3000
		check "... masqueraded to r3's address" eq "$peer" 198.19.4.1
	else
		check "... out of r1, the main table's WAN" ge $(($(rx s0) - s0)) 3000
		check "... masqueraded to r1's address" eq "$peer" 198.19.2.1
	fi
done
tb_done
