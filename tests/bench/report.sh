#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Turns a benchmark run (raw.csv, extra.txt, tcp.csv in DIR) into DIR/results.md and, with
# gnuplot, DIR/pps.png. Medians of the rounds, min-max beside them, ratios within the run.
set -u
DIR=${1:?usage: report.sh DIR}
cd "$DIR" || exit 1
extra() { tr ' ' '\n' <extra.txt | sed -n "s/^$1=//p" | head -1; }
# The median of NAME_<round>'s values, printed with FORMAT (default: to a tenth); empty if
# there are none.
median_extra() { # NAME [FORMAT]
	tr ' ' '\n' <extra.txt | sed -n "s/^$1_[0-9]*=//p" | sort -n |
		awk -v f="${2:-%.1f}" '{ v[NR] = $1 } END { if (NR) printf f, v[int((NR + 1) / 2)] }'
}
# The packet rates' frames: IPv4, through masquerade, or IPv6, routed (BENCH_FAMILY).
family=$(extra family)
family=${family:-4}
if [ "$family" = 6 ]; then
	kernel="kernel forwarding" frames="IPv6 UDP frames of 68 bytes on the wire"
else
	kernel="kernel NAT" frames="64-byte UDP frames"
fi
# median, min, max of the values in a column
stats() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%d %d %d\n", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
pps_of() { awk -F, -v n="$1" -v p="$2" '$1 == n && $3 == p { print $4 }' raw.csv | stats; }
mpps() { awk -v v="$1" 'BEGIN { printf "%.2f", v / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }

{
	echo "# xdp-fastpath benchmark"
	echo
	echo "Made by \`make bench\` (tests/bench/run.sh) on $(date -u +%Y-%m-%d), kernel $(uname -r),"
	echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))."
	echo "Method: tests/bench/run.sh. $frames over N established flows, from an XDP"
	echo "generator (live frames) through the router namespace to a counting XDP sink; the three"
	echo "paths alternate within each round. Delivered packets per second at the sink: median"
	echo "(min-max) of $(awk -F, 'NR > 1 { print $2 }' raw.csv | sort -n | tail -1) rounds."
	echo "Generator, router and sink share this machine's CPUs, so every figure includes their cost."
	echo
	echo "## Packet rate"
	echo
	echo "| flows | $kernel (1) | xdp-fastpath (2) | ceiling (3) | (2)/(1) | (2)/(3) |"
	echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
	for n in $(awk -F, 'NR > 1 { print $1 }' raw.csv | sort -nu); do
		read -r k kmin kmax <<<"$(pps_of "$n" kernel)"
		read -r f fmin fmax <<<"$(pps_of "$n" fastpath)"
		read -r c cmin cmax <<<"$(pps_of "$n" ceiling)"
		echo "| $n | $(mpps "$k") Mpps ($(mpps "$kmin")-$(mpps "$kmax")) |" \
			"$(mpps "$f") Mpps ($(mpps "$fmin")-$(mpps "$fmax")) |" \
			"$(mpps "$c") Mpps ($(mpps "$cmin")-$(mpps "$cmax")) | $(ratio "$f" "$k") | $(ratio "$f" "$c") |"
		echo "$n $k $f $c" >>pps.dat.tmp
	done
	if grep -q ',fastpath_tc,' raw.csv; then
		echo
		echo "The same frames through xdp-fastpath at the tc hook (--mode tc), after the kernel"
		echo "made an skb of each:"
		echo
		echo "| flows | xdp-fastpath, native XDP (2) | xdp-fastpath, tc hook (4) | (4)/(1) | (4)/(2) |"
		echo "| ---: | ---: | ---: | ---: | ---: |"
		for n in $(awk -F, 'NR > 1 { print $1 }' raw.csv | sort -nu); do
			read -r k kmin kmax <<<"$(pps_of "$n" kernel)"
			read -r f fmin fmax <<<"$(pps_of "$n" fastpath)"
			read -r t tmin tmax <<<"$(pps_of "$n" fastpath_tc)"
			echo "| $n | $(mpps "$f") Mpps ($(mpps "$fmin")-$(mpps "$fmax")) |" \
				"$(mpps "$t") Mpps ($(mpps "$tmin")-$(mpps "$tmax")) |" \
				"$(ratio "$t" "$k") | $(ratio "$t" "$f") |"
		done
	fi
	for mix in $(awk -F, 'NR > 1 && $3 ~ /^fastpath_/ { sub(/^fastpath_/, "", $3); print $3 }' raw.csv |
		grep -vE '^(tc|steer)' | sort -u); do
		echo
		echo "### Traffic like a router's: the $mix mix"
		echo
		echo "The same paths, the generator sending trains of 8 to 32 packets per flow, each"
		echo "flow drawn by Zipf popularity (the k-th most popular sends 1/k of the first's"
		echo "trains; tests/bench/fp_bench.c, make_mix) instead of one packet to each flow in"
		echo "turn. (2)/(2, fewest) compares xdp-fastpath with itself at the fewest flows, same mix."
		echo
		echo "| flows | $kernel (1) | xdp-fastpath (2) | ceiling (3) | (2)/(1) | (2)/(3) | (2)/(2, fewest) |"
		echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		fewest=''
		for n in $(awk -F, 'NR > 1 { print $1 }' raw.csv | sort -nu); do
			read -r k kmin kmax <<<"$(pps_of "$n" "kernel_$mix")"
			read -r f fmin fmax <<<"$(pps_of "$n" "fastpath_$mix")"
			read -r c cmin cmax <<<"$(pps_of "$n" "ceiling_$mix")"
			fewest=${fewest:-$f}
			echo "| $n | $(mpps "$k") Mpps ($(mpps "$kmin")-$(mpps "$kmax")) |" \
				"$(mpps "$f") Mpps ($(mpps "$fmin")-$(mpps "$fmax")) |" \
				"$(mpps "$c") Mpps ($(mpps "$cmin")-$(mpps "$cmax")) | $(ratio "$f" "$k") |" \
				"$(ratio "$f" "$c") | $(ratio "$f" "$fewest") |"
		done
	done
	steer_paths=$(awk -F, 'NR > 1 && $3 ~ /steer/ { print $3 }' raw.csv | sort -u)
	if [ -n "$steer_paths" ]; then
		echo
		echo "## Multi-core steering (--steer)"
		echo
		echo "The same frames, xdp-fastpath attached with --steer (every CPU) or --steer=LIST:"
		echo "the program on the port hashes each flow to one of the CPUs and a cpumap entry"
		echo "forwards it there. This machine has $(nproc) CPUs; the generator runs on the CPU"
		echo "where the frames arrive (as a NIC's interrupt would), and the sink takes CPU time too."
		echo
		echo "kernel+steer: nothing offloaded (--skip-mark 0), the program only steers and the"
		echo "kernel's NAT runs on the flow's CPU, as with RPS."
		echo
		echo "| flows | path | without steering | steered | ratio |"
		echo "| ---: | --- | ---: | ---: | ---: |"
		for n in $(awk -F, 'NR > 1 { print $1 }' raw.csv | sort -nu); do
			for p in $steer_paths; do
				base=fastpath
				[[ $p == kernel* ]] && base=kernel
				read -r f fmin fmax <<<"$(pps_of "$n" "$base")"
				read -r st stmin stmax <<<"$(pps_of "$n" "$p")"
				echo "| $n | ${p/steer/--steer} | $(mpps "$f") Mpps ($(mpps "$fmin")-$(mpps "$fmax")) |" \
					"$(mpps "$st") Mpps ($(mpps "$stmin")-$(mpps "$stmax")) |" \
					"$(ratio "$st" "$f") |"
			done
		done
	fi
	echo
	echo "## Cost, memory, setup"
	echo
	if grep -q alloc_bytes_ extra.txt; then
		echo "- Kernel memory per flow direction as allocated (slab objects in use, 500k" \
			"entries in a map like the flow maps):" \
			"$(tr ' ' '\n' <extra.txt | sed -n 's/^alloc_bytes_\(.*\)=\(.*\)/\1 \2 bytes/p' |
				paste -sd, - | sed 's/,/, /g')."
	fi
	for n in $(awk -F, 'NR > 1 { print $1 }' raw.csv | sort -nu); do
		ns=$(median_extra "ns_per_packet_$n")
		ns_ceiling=$(median_extra "ns_per_packet_ceiling_$n")
		[ -n "$ns_ceiling" ] && ns_ceiling="; the ceiling's program $ns_ceiling the same way"
		bytes=$(extra "map_bytes_$n")
		slots=$(extra "map_slots_$n")
		entries=$(extra "map_entries_$n")
		anon=$(extra "daemon_anon_kb_$n")
		own=${anon:+" (its own memory, RssAnon: $anon KiB; the rest its libraries and the mapped IPv4 table)"}
		echo "- $n flows: the XDP program costs $ns ns/packet" \
			"(bpf_stats, in a run of its own$ns_ceiling);" \
			"the IPv$family flow table, allocated whole at attach, is $bytes bytes for" \
			"$((slots / 2)) flow directions (--flows; two slots each:" \
			"$(awk -v b="$bytes" -v s="$slots" 'BEGIN { if (s) printf "%.0f", 2 * b / s }')" \
			"bytes a flow direction), $entries of them in use;" \
			"daemon RSS $(extra "daemon_rss_kb_$n") KiB$own;" \
			"established flows offloaded by the first dump (attach to all offloaded) in" \
			"$(tr ' ' '\n' <extra.txt | sed -n "s/^dump_setup_${n}_[0-9]*=//p" | sort -n | head -1 |
				awk -v n="$(extra "established_$n")" '{ printf "%.2f s (%.0f flows/s)", $1, n / $1 }')."
	done
	echo "- Through events: $(extra event_setup_flows) new flows established while the daemon ran" \
		"were offloaded within $(awk -v s="$(extra event_setup_s)" 'BEGIN { printf "%.2f", s }') s" \
		"of the first packet; $(extra event_offloaded) offloaded," \
		"$(extra event_overruns) event overruns, $(extra event_resyncs) resyncs." \
		"The generator paces establishment (echo servers must answer every flow), so this" \
		"bounds the daemon's rate from below."
	if grep -q burst_flows_ extra.txt; then
		# Median of the rounds: seconds from the first conntrack entry to all offloaded.
		med() { median_extra "$1" %s; }
		all() { tr ' ' '\n' <extra.txt | sed -n "s/^$1_[0-9]*=//p" | paste -sd/; }
		n=$(med burst_flows)
		echo "- A burst: $n conntrack entries created at once through ctnetlink (each already" \
			"answered; created in $(med burst_created_s) s). All offloaded in" \
			"$(awk -v s="$(med burst_offloaded_s)" 'BEGIN { printf "%.2f", s }') s (median;" \
			"$(all burst_offloaded_s | awk -F/ '{ for (i = 1; i <= NF; i++) printf "%s%.2f", (i > 1 ? "/" : ""), $i }') s)," \
			"$(awk -v n="$n" -v s="$(med burst_offloaded_s)" 'BEGIN { printf "%.0f", n / s }') flows/s;" \
			"offloaded $(all burst_offloaded), overruns $(all burst_overruns)," \
			"resyncs $(all burst_resyncs), table full $(all burst_table_full);" \
			"daemon RSS then $(all burst_rss_kb) KiB."
	fi
	if [ -f tcp.csv ]; then
		echo
		echo "## TCP (iperf3, MTU-sized packets)"
		echo
		echo "Without GRO on the router's ports (the veths' default): XDP frame by frame."
		echo
		echo "| streams | $kernel (1) | xdp-fastpath, native XDP (2) | (2)/(1) | softirq share (1) / (2) |"
		echo "| ---: | ---: | ---: | ---: | ---: |"
		col() { awk -F, -v s="$1" -v p="$2" '$1 == s && $3 == p { print $4 }' tcp.csv | stats; }
		si() { awk -F, -v s="$1" -v p="$2" '$1 == s && $3 == p { t += $5; n++ } END { if (n) printf "%.0f", t / n }' tcp.csv; }
		for s in 1 4; do
			read -r k kmin kmax <<<"$(col $s kernel)"
			read -r f fmin fmax <<<"$(col $s fastpath)"
			echo "| $s | $k ($kmin-$kmax) Mbit/s | $f ($fmin-$fmax) Mbit/s | $(ratio "$f" "$k") |" \
				"$(si $s kernel)% / $(si $s fastpath)% |"
		done
		if grep -q ',fastpath_tc_gro,' tcp.csv; then
			echo
			echo "With GRO on the router's ports, as most NIC drivers do: the kernel forwards 64 KB"
			echo "aggregates, and so does xdp-fastpath at the tc hook (--mode tc). The egress cuts"
			echo "them in software (no TSO) or sends them on whole (TSO). (2) is from the table above."
			echo
			echo "(5): --mode split, native XDP with TCP left to GRO and the tc hook."
			# The hooks auto chose for r0,r1, as the bench recorded them in extra.txt.
			auto_hooks() {
				tr ' ' '\n' <extra.txt | sed -n "s/^auto_hooks_$1_[0-9_]*=//p" | sort -u |
					paste -sd' '
			}
			udp_hooks=$(auto_hooks udp) # none in a run without packet rates (BENCH_PPS=0)
			echo "(6): attach's defaults (--mode auto), which chose $(auto_hooks tcp) for r0,r1" \
				"here${udp_hooks:+ ($udp_hooks for the packet rates above)}."
			echo
			echo "| streams | egress | $kernel + GRO (3) | xdp-fastpath, tc hook (4) | (4)/(3) | split (5) | (5)/(3) | defaults (6) | (6)/(3) | (2)/(3) |"
			echo "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
			for s in 1 4; do
				read -r f <<<"$(col $s fastpath)"
				for v in "" _tso; do
					read -r g gmin gmax <<<"$(col $s kernel_gro$v)"
					read -r t tmin tmax <<<"$(col $s fastpath_tc_gro$v)"
					read -r a amin amax <<<"$(col $s fastpath_split_gro$v)"
					read -r d dmin dmax <<<"$(col $s fastpath_auto_gro$v)"
					echo "| $s | $([ -z "$v" ] && echo "no TSO" || echo TSO) |" \
						"$g ($gmin-$gmax) Mbit/s | $t ($tmin-$tmax) Mbit/s |" \
						"$(ratio "$t" "$g") | ${a:-?} (${amin:-?}-${amax:-?}) Mbit/s |" \
						"$(ratio "$a" "$g") | ${d:-?} (${dmin:-?}-${dmax:-?}) Mbit/s |" \
						"$(ratio "$d" "$g") | $(ratio "$f" "$g") |"
				done
			done
		fi
		echo
		echo "Softirq share: softirq time over all CPU time during the transfer (the whole machine:"
		echo "client, router and server share it)."
	fi
	echo
	echo "## Goals (issue 4)"
	echo
	echo "pps >= 90% of the ceiling and >= 2.5x kernel NAT at 1k and 64k flows; 1M flows within"
	echo "25% of the 1k figure; <= 128 bytes per direction per flow; daemon RSS <= 8 MB at 64k"
	echo "flows; >= 50k flows offloaded per second without loss. See the notes below the raw data."
	echo
	echo "## Raw data"
	echo
	echo '```'
	cat raw.csv
	[ -f tcp.csv ] && cat tcp.csv
	cat extra.txt
	echo '```'
} >results.md

if command -v gnuplot >/dev/null && [ -f pps.dat.tmp ]; then
	mv pps.dat.tmp pps.dat
	gnuplot <<-GP
		set terminal png size 900,500
		set output 'pps.png'
		set title 'Delivered packet rate, $frames (median of rounds)'
		set ylabel 'Mpps'
		set style data histograms
		set style histogram clustered gap 1
		set style fill solid 0.8 border -1
		set key below
		set yrange [0:*]
		set grid ytics
		plot 'pps.dat' using (\$2/1e6):xtic(sprintf("%d flows", \$1)) title '$kernel', \\
		     '' using (\$3/1e6) title 'xdp-fastpath', \\
		     '' using (\$4/1e6) title 'bare XDP redirect (ceiling)'
	GP
fi
rm -f pps.dat.tmp
cat results.md
