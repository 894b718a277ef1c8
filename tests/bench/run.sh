#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make bench: kernel forwarding + NAT vs xdp-fastpath vs a bare XDP redirect (the ceiling),
# on the namespace testbed of docs/testing.md. Needs root; several minutes.
#
# Method: a generator (XDP, BPF_PROG_TEST_RUN live frames) on the client sends 64-byte UDP
# frames over N flows into the router; a sink (XDP) on the server counts and drops them.
# Flows are established first (replied by echo servers), so conntrack and the fastpath see
# them as they would on a router. In each round the three paths run one after the other for
# BENCH_SECONDS each; figures are the median of BENCH_ROUNDS rounds with min-max, and ratios
# are taken within the run. The whole chain (generator, router, sink) runs as one softirq
# chain on this machine, so a figure is the cost of all three per packet.
#
#   BENCH_FLOWS="1000 65536"  flow counts (add 1048576 for the 1M figure: needs time and RAM)
#   BENCH_FAMILY=4   6: the packet rates with IPv6 frames (68 bytes on the wire), routed
#                    without NAT as OpenWrt routes IPv6, so kernel (1) is the kernel's
#                    forwarding with conntrack and the firewall; the burst of conntrack
#                    entries is of routed IPv6 conversations, and TCP runs over IPv6
#   BENCH_MIX="zipf"  also measure kernel NAT, xdp-fastpath and the ceiling with traffic more
#                     like a router's than the round-robin over all flows (the worst case):
#                     trains of 8-32 packets per flow, flows drawn by Zipf popularity
#                     (fp_bench.c's make_mix); "" for the round-robin only
#   BENCH_ROUNDS=3 BENCH_SECONDS=3 BENCH_TCP=1 (iperf3 TCP, 1 and 4 streams; kernel NAT
#                        and xdp-fastpath without GRO, then with GRO on the router's ports:
#                        kernel NAT against the tc hook, --mode split (native XDP, TCP
#                        at the tc hook) and attach's defaults (auto), egress with and
#                        without TSO)
#   BENCH_PPS=1 (0: only TCP)  BENCH_BURST=65536 (conntrack entries created at once; 0: none)
#   BENCH_STEER="all 1" (also measure xdp-fastpath --steer and --steer=1 in each round;
#                        "" for neither; the default on one CPU)
#   BENCH_TABLE_FLOWS=N  attach's --flows in the packet-rate runs (default: two per flow,
#                        at least attach's default 65536): how big a table the flows are
#                        spread over
#   BENCH_MEM_LAYOUTS="ipv4:16:56 ..."  flow entry layouts (name:key:value bytes) whose kernel
#                        memory per entry as allocated is measured first; "" for none
#   BENCH_OUT=build/bench     results.md, raw.csv, pps.png
set -u
cd "$(dirname "$0")/../.." || exit 2
if [ "$(id -u)" != 0 ]; then
	echo "bench: run as root (namespaces, XDP, BPF statistics)" >&2
	exit 1
fi
FLOWS=${BENCH_FLOWS:-1000 65536}
FAMILY=${BENCH_FAMILY:-4}
case $FAMILY in
4)
	CLIENT_ADDR=198.18.1.2 SERVER_ADDR=198.19.2.2
	BURST_ADDRS="198.18.1.10 $SERVER_ADDR 30000 198.19.2.1" # ct-burst SADDR DADDR DPORT NATADDR
	;;
6)
	CLIENT_ADDR=2001:2:0:1::2 SERVER_ADDR=2001:2:0:2::2
	BURST_ADDRS="2001:2:0:1::10 $SERVER_ADDR 30000 -"
	;;
*) echo "bench: BENCH_FAMILY is 4 or 6" >&2 && exit 2 ;;
esac
MIXES=${BENCH_MIX-zipf}
ROUNDS=${BENCH_ROUNDS:-3}
RUN_S=${BENCH_SECONDS:-3}
DO_TCP=${BENCH_TCP:-1}
DO_PPS=${BENCH_PPS:-1}
if [ "$(nproc)" -ge 2 ]; then STEER=${BENCH_STEER-all 1}; else STEER=${BENCH_STEER-}; fi
OUT=${BENCH_OUT:-build/bench}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TB=fpbench$$
. tests/e2e/testbed.sh
BENCH=$TB_ROOT/build/fp-bench
UDP=$TB_ROOT/build/fp-udp
BPIN=/sys/fs/bpf/fpbench-$TB
RAW=$OUT/raw.csv
bench_in() { local ns=$1; shift; nsenter --net=/run/netns/"$ns" "$BENCH" "$@"; }
# Source ports per server port of the generated flows: the one constant of bench.h.
PORTS_PER_DPORT=$(awk '$2 == "BENCH_PORTS_PER_DPORT" { print $3 }' tests/bench/bench.h)
mac_of() { ip -n "$1" -o link show "$2" | sed 's/.*link\/ether \([0-9a-f:]*\).*/\1/'; }
log() { printf '[bench] %s\n' "$*" >&2; }
die() { log "$*: the bench stops here, results.md unwritten" && exit 1; }
# --flows for N flows: a direction each.
table_flows() { echo "${BENCH_TABLE_FLOWS:-$(($1 * 2 > 65536 ? $1 * 2 : 65536))}"; }

stats_was=$(sysctl -n kernel.bpf_stats_enabled)
ct_max_was=$(sysctl -n net.netfilter.nf_conntrack_max 2>/dev/null)
bench_cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
	[ -n "$ct_max_was" ] && sysctl -qw net.netfilter.nf_conntrack_max="$ct_max_was"
	rm -rf "$BPIN"
	tb_cleanup
}
trap bench_cleanup EXIT
tb_setup
trap bench_cleanup EXIT
R0=$(mac_of "$TB_RTR" r0)
R1=$(mac_of "$TB_RTR" r1)
C0=$(mac_of "$TB_CLI" c0)
S0=$(mac_of "$TB_SRV" s0)
max_flows=0
for n in $FLOWS; do [ "$n" -gt "$max_flows" ] && max_flows=$n; done

# Conntrack must hold every flow, and keep them while a path that does not refresh them runs.
sysctl -qw net.netfilter.nf_conntrack_max=$((max_flows * 2 + 65536)) 2>/dev/null
rtr sysctl -qw net.netfilter.nf_conntrack_udp_timeout=600 net.netfilter.nf_conntrack_udp_timeout_stream=600
# The sinks pin their counters as attach pins its maps: on a BPF filesystem, mounted as
# attach would where nothing (systemd) has.
if [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" != bpf_fs ]; then
	mount -t bpf -o mode=0700 bpf /sys/fs/bpf || die "no BPF filesystem at /sys/fs/bpf"
	log "mounted a BPF filesystem at /sys/fs/bpf"
fi
bench_in "$TB_SRV" sink "$BPIN" s0 || die "the sink on s0"
bench_in "$TB_CLI" sink "$BPIN" c0 || die "the sink on c0"
# The generator's XDP_TX lands in r0 and replies in r1: without XDP there, NAPI needs GRO.
napi_back() { for i in r0 r1; do rtr ethtool -K $i gro off >/dev/null; rtr ethtool -K $i gro on >/dev/null; done; }
napi_back
for ((p = 0; p <= max_flows / PORTS_PER_DPORT; p++)); do
	srv "$UDP" server $((10000 + p)) >/dev/null &
	TB_PIDS+=($!)
done
sleep 0.5

gen() { # FLOWS PACKETS SECONDS [PACE_US [DPORT_BASE [MIX]]]: prints "sent N in T s"
	bench_in "$TB_CLI" gen c0 "$1" "$2" "$3" "$R0" "$C0" "$CLIENT_ADDR" "$SERVER_ADDR" \
		${4:+$4} ${5:+$5} ${6:+$6}
}
replied() { rtr conntrack -L -f "ipv$FAMILY" -p udp 2>/dev/null | grep -vc UNREPLIED; }
establish() { # FLOWS [DPORT_BASE]: every flow answered, through the kernel path
	bench_in "$TB_SRV" pass "$BPIN" s0 1
	gen "$1" $(($1 * 3)) 600 200 "${2:-}" >/dev/null
	sleep 1
	bench_in "$TB_SRV" pass "$BPIN" s0 0
}
offloaded() { fastpath status --json 2>/dev/null | jq .offloaded; }
hooks() { fastpath status --json | jq -r '[.interfaces[].mode | gsub(" "; "")] | join(",")'; } # r0,r1
wait_offloaded() { # COUNT TIMEOUT_S: seconds until the daemon has offloaded COUNT, or empty
	local start=$(date +%s.%N) deadline=$((SECONDS + $2))
	while [ "$(offloaded)" -lt "$1" ]; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.05
	done
	echo "$(date +%s.%N) - $start" | bc -l
}
# The rates are measured with live frames, which some kernels refuse (docs/testing.md):
# one now, rather than after minutes of setting up.
if [ "$DO_PPS" = 1 ]; then
	gen 1 1 5 >/dev/null || die "the generator: this kernel sends no live frames"
fi

measure() { # FLOWS [MIX]: delivered pps at the sink over RUN_S seconds
	local before after out
	before=$(bench_in "$TB_SRV" count "$BPIN" s0) || die "reading the sink's counter"
	out=$(gen "$1" 0 "$RUN_S" 0 0 "${2:-rr}") || die "the generator"
	after=$(bench_in "$TB_SRV" count "$BPIN" s0) || die "reading the sink's counter"
	# Every path delivers some: none is a broken testbed, not a figure.
	[ "$after" -gt "$before" ] || die "no packet reached the sink"
	echo "$(((after - before) * 1000 / $(echo "$out" | awk '{ printf "%d", $4 * 1000 }')))"
}

# steered PREFIX FLOWS ROUND [ATTACH OPTIONS]: xdp-fastpath with each --steer variant of
# $STEER ("all": --steer, a CPU list: --steer=LIST), measured as paths PREFIX + steer[=LIST]
# (PREFIX "kernel+" where nothing is offloaded, "" for the fastpath).
steered() {
	local prefix=$1 n=$2 r=$3 cpus arg pps
	shift 3
	for cpus in $STEER; do
		arg=--steer
		[ "$cpus" = all ] || arg=--steer=$cpus
		fastpath attach r0 r1 "$arg" "$@" --log-file "$TB_TMP/daemon.log" >/dev/null
		if [ -z "$prefix" ]; then
			wait_offloaded "$est" 300 >/dev/null || log "only $(offloaded) of $est offloaded"
		fi
		pps=$(measure "$n") || exit 1
		log "$n flows, round $r: ${prefix:-fastpath }$arg $pps pps" \
			"($(fastpath status --json | jq .forwarded) on the fastpath)"
		echo "$n,$r,$prefix${arg#--},$pps" >>"$RAW"
		fastpath detach >/dev/null
		napi_back
	done
}

mixes() { # FLOWS ROUND PATH: the same path measured with each mix of $MIXES
	local mix pps
	for mix in $MIXES; do
		pps=$(measure "$1" "$mix") || exit 1
		log "$1 flows, round $2: $3 with the $mix mix $pps pps"
		echo "$1,$2,${3}_$mix,$pps" >>"$RAW"
	done
}

prog_stats() { bpftool prog show id "$1" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; }
prog_cost() { # PROG_ID FLOWS: its ns per packet in a run of its own, bpf_stats on only then
	local ns0 cnt0 ns1 cnt1

	sysctl -qw kernel.bpf_stats_enabled=1
	read -r ns0 cnt0 <<<"$(prog_stats "$1")"
	measure "$2" >/dev/null || return 1
	read -r ns1 cnt1 <<<"$(prog_stats "$1")"
	sysctl -qw kernel.bpf_stats_enabled=0
	echo "($ns1 - $ns0) / ($cnt1 - $cnt0 + 1)" | bc -l
}

echo "flows,round,path,pps" >"$RAW"
: >"$OUT/extra.txt"
echo "family=$FAMILY" >>"$OUT/extra.txt"
# bpf_stats makes every BPF program run read the clock twice (a paravirtual clock read
# here: about a fifth of the CPU in a profile), so it is on only while the program's own
# cost is measured, never while a packet rate is.
sysctl -qw kernel.bpf_stats_enabled=0

# Kernel memory per flow direction as allocated (slab objects), for this build's flow
# entries and for those before 2026-12-03 (20/72 and 44/96 bytes), 500k entries each.
MEM_LAYOUTS=${BENCH_MEM_LAYOUTS-"ipv4:16:56 ipv6:40:80 ipv4_before:20:72 ipv6_before:44:96"}
for layout in $MEM_LAYOUTS; do
	IFS=: read -r name ksize vsize <<<"$layout"
	b=$("$BENCH" map-memory 500000 "$ksize" "$vsize" | awk '{ print $2 }')
	log "flow map memory, $name (key $ksize, value $vsize bytes): $b bytes per entry"
	echo "alloc_bytes_$name=$b" >>"$OUT/extra.txt"
done
[ "$DO_PPS" = 1 ] || FLOWS=""
for n in $FLOWS; do
	log "$n flows: establishing through the kernel"
	establish "$n"
	est=$(replied)
	log "$n flows: $est replied conntrack entries"
	echo "established_$n=$est" >>"$OUT/extra.txt"
	# Fewer than half answered (the echo servers missing, conntrack full): what follows
	# would not measure $n flows.
	if [ "$est" -lt $((n / 2)) ]; then
		log "only $est of $n flows were answered through the kernel: stopping"
		exit 1
	fi
	for ((r = 1; r <= ROUNDS; r++)); do
		# 1. kernel forwarding + nft masquerade
		pps=$(measure "$n") || exit 1
		log "$n flows, round $r: kernel $pps pps"
		echo "$n,$r,kernel,$pps" >>"$RAW"
		mixes "$n" "$r" kernel

		# 1b. the kernel's path steered (RPS-like): --skip-mark 0 matches every connection
		# here, so nothing is offloaded and the program only hands each frame to its flow's
		# CPU, where the cpumap entry passes it to the kernel.
		steered kernel+ "$n" "$r" --skip-mark 0

		# 2. xdp-fastpath with its daemon, as attach's defaults put it (auto_hooks_udp in
		# extra.txt); the first dump offloads the established flows
		t0=$(date +%s.%N)
		fastpath attach r0 r1 --flows $(table_flows "$n") \
			--log-file "$TB_TMP/daemon.log" >/dev/null
		echo "auto_hooks_udp_${n}_$r=$(hooks)" >>"$OUT/extra.txt"
		if wait_offloaded "$est" 300 >/dev/null; then
			echo "dump_setup_${n}_$r=$(echo "$(date +%s.%N) - $t0" | bc -l)" >>"$OUT/extra.txt"
		else
			log "only $(offloaded) of $est offloaded"
		fi
		pps=$(measure "$n") || exit 1
		log "$n flows, round $r: fastpath $pps pps" \
			"($(fastpath status --json | jq .forwarded) on the fastpath)"
		echo "$n,$r,fastpath,$pps" >>"$RAW"
		mixes "$n" "$r" fastpath
		# The program's own cost, in a run of its own with bpf_stats on.
		ns=$(prog_cost "$(fastpath status --json | jq .program_id)" "$n") || exit 1
		echo "ns_per_packet_${n}_$r=$ns" >>"$OUT/extra.txt"
		if [ "$r" = 1 ]; then
			st=$(fastpath status --json)
			read -r mem slots <<<"$(bpftool map show pinned "$TB_PIN/fp_flows$FAMILY" -j |
				jq -r '"\(.bytes_memlock) \(.max_entries)"')"
			entries=$(jq ".flows_ipv$FAMILY" <<<"$st")
			# RssAnon: the daemon's own memory. VmRSS also counts the pages it maps
			# (RssFile): its libraries and the IPv4 flow table, kernel memory that the
			# map's own figure already counts.
			read -r rss anon <<<"$(awk '/^VmRSS/ { r = $2 } /^RssAnon/ { a = $2 }
				END { print r, a }' /proc/"$(jq .daemon_pid <<<"$st")"/status)"
			echo "map_bytes_$n=$mem map_slots_$n=$slots map_entries_$n=$entries" \
				"daemon_rss_kb_$n=$rss" \
				"daemon_anon_kb_$n=$anon" >>"$OUT/extra.txt"
			echo "overruns_dump_$n=$(jq .overruns <<<"$st")" >>"$OUT/extra.txt"
		fi
		fastpath detach >/dev/null
		napi_back

		# 2b. the same with --steer: each flow's work on its CPU, through a cpumap
		steered "" "$n" "$r" --flows $(table_flows "$n")

		# 2c. xdp-fastpath at the tc hook: the same program after the kernel made an skb
		fastpath attach r0 r1 --mode tc --flows $(table_flows "$n") \
			--log-file "$TB_TMP/daemon.log" >/dev/null
		wait_offloaded "$est" 300 >/dev/null || log "only $(offloaded) of $est offloaded"
		pps=$(measure "$n") || exit 1
		log "$n flows, round $r: fastpath at the tc hook $pps pps"
		echo "$n,$r,fastpath_tc,$pps" >>"$RAW"
		fastpath detach >/dev/null
		napi_back

		# 3. the ceiling: a bare redirect, no lookup, no rewrite
		bench_in "$TB_RTR" ceiling "$BPIN" r0 r1 "$S0" "$R1"
		pps=$(measure "$n") || exit 1
		log "$n flows, round $r: ceiling $pps pps"
		echo "$n,$r,ceiling,$pps" >>"$RAW"
		mixes "$n" "$r" ceiling
		# Its cost in the same chain: what the fastpath's program adds is the difference.
		ns=$(prog_cost "$(ip -n "$TB_RTR" -j -d link show r0 | jq '.[0].xdp.prog.id')" "$n") ||
			exit 1
		echo "ns_per_packet_ceiling_${n}_$r=$ns" >>"$OUT/extra.txt"
		bench_in "$TB_RTR" detach "$BPIN" r0
		napi_back
	done
done

# Setup through events: new flows while the daemon runs.
if [ -n "$FLOWS" ]; then
ev_n=$(for n in $FLOWS; do echo "$n"; done | sort -n | tail -1)
[ "$ev_n" -gt 65536 ] && ev_n=65536
# New flows to other ports (masquerade needs a port space of their own), with their echo servers.
for ((p = 0; p <= ev_n / PORTS_PER_DPORT; p++)); do
	srv "$UDP" server $((20000 + p)) >/dev/null &
	TB_PIDS+=($!)
done
# Two entries per connection, for the flows established above and the new ones.
fastpath attach r0 r1 --flows $(((max_flows + ev_n) * 2)) --log-file "$TB_TMP/daemon.log" >/dev/null
wait_offloaded "$(replied)" 300 >/dev/null
base=$(offloaded)
start=$(date +%s.%N)
establish "$ev_n" 20000 &
est_pid=$!
t_est=""
while [ "$(offloaded)" -lt $((base + ev_n * 99 / 100)) ] && [ $(($(date +%s) - ${start%.*})) -lt 300 ]; do
	sleep 0.05
done
t_off=$(echo "$(date +%s.%N) - $start" | bc -l)
wait $est_pid
st=$(fastpath status --json)
echo "event_setup_flows=$ev_n event_setup_s=$t_off event_overruns=$(jq .overruns <<<"$st") event_resyncs=$(jq .resyncs <<<"$st") event_offloaded=$(($(jq .offloaded <<<"$st") - base))" >>"$OUT/extra.txt"
fastpath detach >/dev/null
napi_back
fi

# Setup through a burst: BURST conntrack entries appear at once (created through ctnetlink,
# each already answered), so the daemon's event-to-map-entry rate is what is measured.
# Repeated ROUNDS times, each with a fresh daemon and event buffer (default 4 MiB).
BURST=${BENCH_BURST:-65536}
if [ "$BURST" -gt 0 ]; then
rtr conntrack -F -f "ipv$FAMILY" >/dev/null 2>&1
for ((r = 1; r <= ROUNDS; r++)); do
	fastpath attach r0 r1 --flows $((BURST * 2 + 1024)) --log-file "$TB_TMP/daemon.log" >/dev/null
	# fp-bench polls the daemon's counters itself: a polling script would take the CPU
	# the daemon needs (status walks the flow maps).
	# shellcheck disable=SC2086 # four words
	bench_in "$TB_RTR" ct-burst "$BURST" $BURST_ADDRS "$TB_PIN" \
		>"$TB_TMP/burst.out" || { log "ct-burst failed: $(cat "$TB_TMP/burst.out")"; exit 1; }
	st=$(fastpath status --json)
	echo "burst_flows_$r=$BURST" \
		"burst_created_s_$r=$(awk '/^created/ { print $4 }' "$TB_TMP/burst.out")" \
		"burst_offloaded_s_$r=$(awk '/^offloaded/ { print $4 }' "$TB_TMP/burst.out")" \
		"burst_offloaded_$r=$(jq .offloaded <<<"$st")" \
		"burst_events_$r=$(jq .events <<<"$st") burst_overruns_$r=$(jq .overruns <<<"$st")" \
		"burst_resyncs_$r=$(jq .resyncs <<<"$st") burst_table_full_$r=$(jq .table_full <<<"$st")" \
		"burst_rss_kb_$r=$(awk '/VmRSS/ { print $2 }' /proc/"$(jq .daemon_pid <<<"$st")"/status)" \
		>>"$OUT/extra.txt"
	log "burst $r: $(tr '\n' ' ' <"$TB_TMP/burst.out")"
	fastpath detach >/dev/null
	rtr conntrack -F -f "ipv$FAMILY" >/dev/null 2>&1
done
napi_back
fi

# TCP as published router tests do it: iperf3, default TCP, MTU-sized packets.
if [ "$DO_TCP" = 1 ]; then
	rtr conntrack -F -f "ipv$FAMILY" >/dev/null 2>&1 # the UDP flows above: not this phase's business
	# Plain endpoints, as in the e2e testbed: an XDP program on a veth would turn off GSO/TSO
	# on its peer and run every frame of both paths through XDP. GRO toggles bring NAPI back.
	for i in s0 c0; do bench_in "$([ $i = s0 ] && echo "$TB_SRV" || echo "$TB_CLI")" detach "$BPIN" $i; done
	srv ethtool -K s0 gro off >/dev/null; srv ethtool -K s0 gro on >/dev/null
	cli ethtool -K c0 gro off >/dev/null; cli ethtool -K c0 gro on >/dev/null
	srv iperf3 -s -D -1 >/dev/null 2>&1
	echo "streams,round,path,mbps,softirq_pct" >"$OUT/tcp.csv"
	softirq() { awk '/^cpu / { print $8, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }
	# Same offloads on both paths, as docs/testing.md asks: first the router's veths without
	# GRO (their default), the kernel against XDP frame by frame. Then with GRO on the router's
	# ports, as most NIC drivers do: the kernel forwards 64 KB aggregates, and so does the
	# fastpath at the tc hook. The egress either segments them in software (tso and gso off:
	# a NIC without TSO) or sends them on whole (TSO).
	gro() { for i in r0 r1; do rtr ethtool -K $i gro "$1" >/dev/null; done; }
	tso() { for i in r0 r1; do rtr ethtool -K $i tso "$1" gso "$1" >/dev/null; done; }
	attach() { fastpath attach r0 r1 --log-file "$TB_TMP/daemon.log" "$@" >/dev/null; }
	for ((r = 1; r <= ROUNDS; r++)); do
		for path in kernel fastpath kernel_gro fastpath_tc_gro fastpath_split_gro \
			fastpath_auto_gro kernel_gro_tso fastpath_tc_gro_tso fastpath_split_gro_tso \
			fastpath_auto_gro_tso; do
			case $path in
			kernel) gro off; tso on ;;
			fastpath) gro off; tso on; attach --mode native ;;
			kernel_gro) gro on; tso off ;;
			fastpath_tc_gro) gro on; tso off; attach --mode tc ;;
			fastpath_split_gro) gro on; tso off; attach --mode split ;;
			fastpath_auto_gro) gro on; tso off; attach ;;
			kernel_gro_tso) gro on; tso on ;;
			fastpath_tc_gro_tso) gro on; tso on; attach --mode tc ;;
			fastpath_split_gro_tso) gro on; tso on; attach --mode split ;;
			fastpath_auto_gro_tso) gro on; tso on; attach ;;
			esac
			[[ $path == fastpath_auto* ]] && echo "auto_hooks_tcp_$r=$(hooks)" >>"$OUT/extra.txt"
			for streams in 1 4; do
				srv iperf3 -s -D -1 >/dev/null 2>&1
				sleep 0.3
				read -r si0 tot0 <<<"$(softirq)"
				mbps=$(cli iperf3 -c "$SERVER_ADDR" -t "$RUN_S" -P $streams -J 2>/dev/null |
					jq '.end.sum_received.bits_per_second / 1e6')
				read -r si1 tot1 <<<"$(softirq)"
				pct=$(echo "100 * ($si1 - $si0) / ($tot1 - $tot0)" | bc -l)
				log "tcp $streams stream(s), round $r: $path $mbps Mbit/s, softirq $pct%"
				printf '%s,%s,%s,%.0f,%.1f\n' $streams $r $path "$mbps" "$pct" >>"$OUT/tcp.csv"
			done
			[[ $path == fastpath* ]] && fastpath detach >/dev/null
		done
	done
	tso on
	napi_back
fi
sysctl -qw kernel.bpf_stats_enabled="$stats_was"
"$TB_ROOT"/tests/bench/report.sh "$OUT"
