#!/bin/bash
# --steer: the program on the port hands each packet to its flow's CPU through a cpumap,
# whose entry runs the fastpath there. Traffic must arrive intact and NATed as without
# steering, and packets that all arrive on one CPU must be forwarded on several.
#
# All UDP endpoints run on CPU 0, so every packet reaches the router's XDP on CPU 0 (a veth
# receives on the sender's CPU): without steering all forwarding happens there (checked
# first, the control); with --steer=1 all of it on CPU 1; with --steer the flows spread
# over the CPUs.
. "$(dirname "$0")/testbed.sh"
if [ "${E2E_MODE:-}" = tc ]; then
	tb_skip "--steer hands frames to other CPUs from XDP, not from the tc hook"
fi
tb_setup
cpus=$(nproc)

# forwarded_by_cpu: the per-CPU counts of forwarded packets (counter 0 of fp_stats, by BTF).
forwarded_by_cpu() {
	bpftool map dump pinned "$TB_PIN/fp_stats" -j |
		jq -c '[.[].formatted | select(.key == 0) | .values[].value.count[0]]'
}
# udp_on_cpu0 FIRST_PORT: eight conversations of 2000 datagrams, endpoints on CPU 0; prints
# the CPUs that forwarded more than 1000 of them ("0", "0 1").
udp_on_cpu0() {
	local before after pids=() port
	before=$(forwarded_by_cpu)
	for port in $(seq "$1" $(($1 + 7))); do
		srv taskset -c 0 "$FP_UDP" server "$port" >/dev/null &
		TB_PIDS+=($!)
		tb_wait 5 srv_udp_listening "$port"
		cli taskset -c 0 "$FP_UDP" client 198.19.2.2 "$port" 2000 >/dev/null &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || tb_log "  a UDP conversation failed"
	done
	after=$(forwarded_by_cpu)
	tb_log "  forwarded by CPU: before $before, after $after"
	jq -n --argjson a "$after" --argjson b "$before" \
		-r '[range(0; $a | length) | select($a[.] - $b[.] > 1000)] | join(" ")'
}

tb_attach || exit 1
check "without --steer, packets arriving on CPU 0 are forwarded on CPU 0 only (control)" \
	eq "$(udp_on_cpu0 6000)" 0
fastpath detach >/dev/null

if [ "$cpus" -ge 2 ]; then
	# As OpenWrt steers away from the CPU taking the interrupts.
	tb_attach --steer=1 || exit 1
	check "with --steer=1, they are forwarded on CPU 1 only" eq "$(udp_on_cpu0 6050)" 1
	check "status names CPU 1" eq "$(fastpath status | grep -c '^steering    by flow over CPU 1 ')" 1
	fastpath detach >/dev/null
fi

tb_attach --steer || exit 1
check "attach --steer turns steering on over every CPU" eq "$(tb_status | jq .steer_cpus)" "$cpus"
check "status names them" eq \
	"$(fastpath status | grep -c "^steering    by flow over CPUs $(seq -s, 0 $((cpus - 1))) ")" 1
file=$(tb_random_file 50)
want=$(sha256sum <"$file" | cut -d' ' -f1)
tb_share_start
steered0=$(tb_stat steered)
check "download of 50 MB arrives intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "the server saw the router's WAN address" eq "$(cat "$TB_TMP/peer")" 198.19.2.1
busy=$(udp_on_cpu0 6100)
[ "$cpus" -ge 2 ] && check "with --steer, they are forwarded on more than one CPU" \
	ge "$(wc -w <<<"$busy")" 2
check "the fastpath carried >= 90% of the packets" tb_share_at_least 90
fwd=$(($(tb_stat forwarded) - TB_FWD0)) steered=$(($(tb_stat steered) - steered0))
tb_log "  forwarded $fwd, steered $steered"
check "every forwarded packet was steered first" ge "$steered" "$fwd"
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0

# The tc hook's program forwards on the CPU that received the packet: attach says so.
E2E_MODE='' tb_reattach at_tc --steer --mode tc || exit 1
check "attach --steer --mode tc says each port is not steered" \
	eq "$(grep -c '^r[01]: not steered: --steer works at XDP' "$TB_TMP/at_tc.out")" 2
tb_done
