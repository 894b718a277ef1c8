#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A throwaway demonstration on a namespace testbed (../tests/e2e/testbed.sh): a router with
# OpenWrt-like firewall and masquerade between a client and a server. The same TCP transfer
# runs through the kernel's NAT, then with xdp-fastpath attached; the counters show who
# carried it. Everything it creates is removed when it ends. Needs root and 'make' first.
set -u
cd "$(dirname "$0")/.." || exit 2
if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: run as root (it creates network namespaces and loads XDP)" >&2
	exit 1
fi
if [ ! -x build/xdp-fastpath ] || [ ! -x build/fp-udp ]; then
	echo "demo.sh: build first: make && make build/fp-udp" >&2
	exit 1
fi
TB=fpdemo$$
. tests/e2e/testbed.sh
MB=${DEMO_MB:-300}

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
timed_transfer() { # prints "SECONDS SHA"
	local start end sha
	start=$(date +%s.%N)
	sha=$(tb_tcp_transfer "$file" up) || return 1
	end=$(date +%s.%N)
	echo "$(echo "$end - $start" | bc -l) $sha"
}

say "Testbed: cli (198.18.1.2) -- rtr (masquerade, fw4-like rules) -- srv (198.19.2.2)"
tb_setup
file=$(tb_random_file "$MB")
want=$(sha256sum <"$file" | cut -d' ' -f1)

say "1. $MB MB through the kernel's forwarding and NAT"
read -r t_kernel sha <<<"$(timed_transfer)"
[ "$sha" = "$want" ] && echo "arrived intact in ${t_kernel}s"

say "2. xdp-fastpath attach r0 r1"
fastpath attach r0 r1 --log-file "$TB_TMP/daemon.log"
tb_share_start
read -r t_fast sha <<<"$(timed_transfer)"
[ "$sha" = "$want" ] && echo "arrived intact in ${t_fast}s"
echo "fastpath share of the forwarded packets: $(tb_share_percent 2>/dev/null)%"
printf 'speed-up on this machine: %.2fx (one run; see make bench for method and ratios)\n' \
	"$(echo "$t_kernel / $t_fast" | bc -l)"

say "3. A live connection, as the operator sees it"
srv "$TB_ROOT/build/fp-udp" server 6000 >/dev/null &
TB_PIDS+=($!)
sleep 0.3
cli "$TB_ROOT/build/fp-udp" client 198.19.2.2 6000 20000 >/dev/null &
sleep 0.5
fastpath flows
echo
fastpath status
wait %2 2>/dev/null
say "4. Counters (xdp-fastpath stats)"
fastpath stats | grep -v ' 0$'
say "Cleaning up (detach, namespaces)"
