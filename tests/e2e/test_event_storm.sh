#!/bin/bash
# An event storm: thousands of connections become established faster than a deliberately
# small event socket drains, so the kernel drops events (ENOBUFS). The daemon must notice,
# resync from a dump, and end with exactly the offloadable connections, both directions.
. "$(dirname "$0")/testbed.sh"
BENCH=$TB_ROOT/build/fp-bench
FLOWS=20000
tb_setup
mac_of() { ip -n "$1" -o link show "$2" | sed 's/.*link\/ether \([0-9a-f:]*\).*/\1/'; }
# A sink on the client drops the replies (the client's stack would answer with ICMP).
nsenter --net=/run/netns/"$TB_CLI" "$BENCH" sink "/sys/fs/bpf/fpbench-$TB" c0
tb_udp_server 10000
# The set of connections must hold still while it is compared: none may expire meanwhile
# (the replied ones would after 30 s idle, which a sanitized build's run can reach).
rtr sysctl -qw net.netfilter.nf_conntrack_udp_timeout=600 net.netfilter.nf_conntrack_udp_timeout_stream=600
tb_attach --event-buffer 16384 || exit 1

# 20000 new UDP flows, each sent three times, answered by the echo server.
nsenter --net=/run/netns/"$TB_CLI" "$BENCH" gen c0 $FLOWS $((FLOWS * 3)) 60 \
	"$(mac_of "$TB_RTR" r0)" "$(mac_of "$TB_CLI" c0)" 198.18.1.2 198.19.2.2 200 >/dev/null
replied() { ip netns exec "$TB_RTR" conntrack -L -p udp --dport 10000 2>/dev/null | grep -vc UNREPLIED; }
settled() { # the daemon holds exactly the replied connections
	[ "$(tb_status | jq .offloaded)" = "$(replied)" ]
}
check "the daemon settles on the replied connections" tb_wait 20 settled
st=$(tb_status)
n=$(replied)
tb_log "  $n replied; status: $(jq -c '{offloaded, overruns, resyncs, flows_ipv4}' <<<"$st")"
check "events were lost (the test provoked an overrun)" ge "$(jq .overruns <<<"$st")" 1
check "the daemon resynced" ge "$(jq .resyncs <<<"$st")" 1
check "nearly every flow was answered" ge "$n" $((FLOWS * 95 / 100))
check "both directions of each are in the flow map" eq "$(jq .flows_ipv4 <<<"$st")" $((2 * n))
tb_done
