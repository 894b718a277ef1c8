#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# How 2026-12-02-veth/ was made (run as root from the checkout, after make): on the e2e
# testbed (tests/e2e/testbed.sh: endpoints with tso, gso and tx checksumming off, GRO on),
# one iperf3 TCP stream, egress with TSO, and 64-byte UDP from a socket (iperf3 -u -l 64
# -b 0, sender-bound: the whole chain runs in the sender's softirq, so the router's cost
# per packet sets the rate), each with GRO on the router's ports and without (_nogro),
# through kernel NAT, native XDP and the tc hook, ROUNDS rounds alternating; then perf
# profiles of the TCP runs with GRO.
# Output: results.csv, perf-MODE.txt (top symbols, whole machine, 5 s; then the receive
# path's parts with their callees).
set -u
ROUNDS=${ROUNDS:-3}
OUT=$(cd "$(dirname "$0")" && pwd)
cd "$(dirname "$0")/../../.." || exit 2
run() { # MODE TEST [perf]
	TB=fpv$$ bash -c '
	. tests/e2e/testbed.sh
	tb_setup >/dev/null
	gro=on
	[[ $2 == *_nogro ]] && gro=off
	for i in r0 r1; do rtr ethtool -K $i gro $gro tso on gso on >/dev/null; done
	[ "$1" != kernel ] && fastpath attach r0 r1 --mode "$1" --log-file "$TB_TMP/d.log" >/dev/null
	srv iperf3 -s -D -1 >/dev/null 2>&1
	sleep 0.3
	if [ "${3:-}" = perf ]; then
		perf record -a -g -o "$TB_TMP/perf.data" -- sleep 5 >/dev/null 2>&1 &
		pp=$!
	fi
	if [[ $2 == tcp* ]]; then
		cli iperf3 -c 198.19.2.2 -t 6 -J | jq ".end.sum_received.bits_per_second / 1e6"
	else
		cli iperf3 -c 198.19.2.2 -u -l 64 -b 0 -t 6 -J | jq ".end.sum_received.packets / 6"
	fi
	if [ -n "${pp:-}" ]; then
		wait "$pp"
		# Self time of the top symbols, then time with callees of the receive paths.
		{ perf report -i "$TB_TMP/perf.data" --no-children --sort symbol -g none 2>/dev/null |
			grep -v "^#" | grep -v "^$" | head -20
		  echo "with callees:"
		  perf report -i "$TB_TMP/perf.data" --children --sort symbol -g none 2>/dev/null |
			grep -E "\] (veth_xdp_rcv_skb|skb_pp_cow_data|bpf_prog_[0-9a-f]+_xdp_fastpath|dev_gro_receive|gro_receive_skb|tcf_classify|tcx_run|bpf_prog_[0-9a-f]+_xdp_fastpath_tc)\b"
		} | sed "s/ *-  *- *$//" >"$4"
	fi
	tb_cleanup >/dev/null 2>&1
	trap - EXIT
	' run "$@"
}
[ "$ROUNDS" -gt 0 ] && echo "round,test,path,value" >"$OUT/results.csv"
for ((r = 1; r <= ROUNDS; r++)); do
	for t in tcp tcp_nogro udp64 udp64_nogro; do
		for m in kernel native tc; do
			v=$(run $m $t)
			echo "$r,$t,$m,$v" | tee -a "$OUT/results.csv"
		done
	done
done
for m in kernel native tc; do run $m tcp perf "$OUT/perf-$m.txt" >/dev/null; done
