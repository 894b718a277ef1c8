#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# What the daemon's scan costs at rest: CPU time per scan (schedstat) with N offloaded
# connections and attach's default table (--flows 65536: 131072 slots, 8 MiB), for two
# builds of xdp-fastpath taking turns. No traffic: the connections are created answered
# through ctnetlink (fp-bench ct-burst), so the scans find nothing to refresh, and what
# they cost is reading the flow tables and the daemon's records.
#
#   sudo SCAN_BUILDS="before=/path/to/old/xdp-fastpath after=build/xdp-fastpath" \
#       docs/bench/2026-12-05-scan/method.sh > results.csv
#   SCAN_CONNS="0 256 4096 32000" SCAN_ROUNDS=3 SCAN_SECONDS=20
set -u
cd "$(dirname "$0")/../../.." || exit 2
BUILDS=${SCAN_BUILDS:-after=build/xdp-fastpath}
CONNS=${SCAN_CONNS:-0 256 4096 32000}
ROUNDS=${SCAN_ROUNDS:-3}
SECONDS_EACH=${SCAN_SECONDS:-20}
TB=fpscan$$
. tests/e2e/testbed.sh
tb_setup
BENCH=$TB_ROOT/build/fp-bench

daemon_cpu_ns() { awk '{ print $1 }' /proc/"$(tb_daemon_pid)"/schedstat; }
scans() { tb_status | jq .scans; }

echo "round,build,connections,scans,cpu_ns,ns_per_scan"
for ((r = 1; r <= ROUNDS; r++)); do
	for n in $CONNS; do
		for b in $BUILDS; do
			name=${b%%=*}
			FASTPATH_BIN=$(realpath "${b#*=}")
			tb_attach >/dev/null || exit 1
			if [ "$n" -gt 0 ]; then
				nsenter --net=/run/netns/"$TB_RTR" "$BENCH" ct-burst "$n" 198.18.1.10 \
					198.19.2.2 30000 198.19.2.1 "$TB_PIN" >/dev/null || exit 1
			fi
			sleep 3 # past the first scans, which walk the whole table
			c0=$(daemon_cpu_ns) s0=$(scans)
			sleep "$SECONDS_EACH"
			c1=$(daemon_cpu_ns) s1=$(scans)
			echo "$r,$name,$n,$((s1 - s0)),$((c1 - c0)),$(((c1 - c0) / (s1 - s0)))"
			fastpath detach >/dev/null
			rtr conntrack -F >/dev/null 2>&1
		done
	done
done
