#!/bin/bash
# What an operator sees and does: JSON that parses, flows with both tuples and the NAT
# mapping, stats --watch with rates, maps bpftool shows with named fields (BTF), and
# detaching one interface taking its flows out of the fastpath.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
tb_udp_server 6000
# A conversation that runs until the fastpath has carried 200 of its datagrams: how soon
# the daemon offloads it depends on the machine's load, not on anything checked here.
ip netns exec "$TB_CLI" "$FP_UDP" client 198.19.2.2 6000 1000000 >/dev/null &
client=$!
TB_PIDS+=("$client")
carried() { ge "$(tb_stat forwarded)" 200; }
check "the fastpath carries a UDP conversation once offloaded" tb_wait 10 carried
kill "$client"
wait "$client" 2>/dev/null
settled() { local was=$(tb_stat forwarded); sleep 0.3; eq "$was" "$(tb_stat forwarded)"; }
tb_wait 5 settled

status_json_ok() {
	fastpath status --json | jq -e '.daemon_pid > 0 and .kernel_flowtable.connections == 0' \
		>/dev/null
}
stats_json_ok() { fastpath stats --json | jq -e '.forwarded > 0' >/dev/null; }
check "status --json parses" status_json_ok
check "stats --json parses" stats_json_ok
fastpath flows --json >"$TB_TMP/flows.json"
check "flows --json lists both directions" eq "$(jq length "$TB_TMP/flows.json")" 2
check "... the LAN side with its SNAT mapping" eq \
	"$(jq -r '.[] | select(.in == "r0") | "\(.src) \(.dst) \(.nat_src) \(.out) \(.snat)"' "$TB_TMP/flows.json")" \
	"$(echo "198.18.1.2:$(jq -r '.[] | select(.in == "r0") | .src' "$TB_TMP/flows.json" | cut -d: -f2) 198.19.2.2:6000 198.19.2.1:$(jq -r '.[] | select(.in == "r0") | .src' "$TB_TMP/flows.json" | cut -d: -f2) r1 true")"
# The flows' counters add up to exactly what the datapath counted as forwarded (nothing
# else ran); the datagrams before the reply made it offloadable took the kernel path.
fwd=$(tb_stat forwarded)
check "... and counts the datagrams it carried ($fwd)" \
	eq "$(jq '[.[].packets] | add' "$TB_TMP/flows.json")" "$fwd"
timeout -s INT 2.5 nsenter --net=/run/netns/"$TB_RTR" "$FASTPATH_BIN" --pin-dir "$TB_PIN" \
	stats --watch >"$TB_TMP/watch" 2>&1
check "stats --watch prints rates" grep -q 'forwarded .*/s$' "$TB_TMP/watch"
check "bpftool shows the flow table's slots with named fields" \
	bash -c "bpftool map lookup pinned $TB_PIN/fp_flows4 key 0 0 0 0 | grep -q nat_saddr"
check "bpftool shows the stats map" bash -c "bpftool map dump pinned $TB_PIN/fp_stats | grep -q value"
check "pins are readable by root only" eq "$(stat -c %a "$TB_PIN/fp_flows4")" 600

# flush empties the maps; the daemon offloads the live connection again from a dump.
check "flush reports what it removed" bash -c "$(declare -p TB_RTR TB_PIN FASTPATH_BIN); \
	nsenter --net=/run/netns/\$TB_RTR \$FASTPATH_BIN --pin-dir \$TB_PIN flush | grep -q 'flushed 2 flow entries'"
back() { [ "$(tb_flow_entries)" = 2 ] && [ "$(tb_status | jq .resyncs)" -ge 1 ]; }
check "... and the daemon offloads the connection again" tb_wait 3 back

# Route change: the next-hop generation moves, so cached next hops are looked up again.
gen=$(tb_status | jq .nexthop_generation)
rtr ip route add 198.19.99.0/24 via 198.19.2.2
gen_moved() { [ "$(tb_status | jq .nexthop_generation)" -gt "$gen" ]; }
check "a route change bumps the next-hop generation" tb_wait 2 gen_moved

# Detaching one interface takes its connections out of the fastpath; the other stays.
check "detach r0" fastpath detach r0
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "... removes the flows through r0" tb_wait 3 no_flows
check "... r1 stays attached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
check "... the daemon keeps running" ge "$(tb_daemon_pid)" 1
tb_done
