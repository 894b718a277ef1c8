#!/bin/bash
# The flow tables' size. Without --flows: room for every connection conntrack may hold,
# both ways (twice nf_conntrack_max, a power of two from 1024 to 65536), both tables
# allocated so at attach; with --flows, what it says. nf_conntrack_max is the first
# namespace's (the others read it): set here and put back.
. "$(dirname "$0")/testbed.sh"
tb_setup
ct_max=/proc/sys/net/netfilter/nf_conntrack_max
was=$(cat "$ct_max") || { tb_fail "no $ct_max (conntrack is loaded by tb_setup's firewall)"; exit 1; }
TB_UNDO+=("echo $was >$ct_max")
slots() { bpftool map show pinned "$TB_PIN/$1" -j | jq .max_entries; }

echo 3000 >"$ct_max"
tb_attach || exit 1
check "without --flows: twice nf_conntrack_max (3000), to a power of two" \
	eq "$(tb_status | jq .max_flows)" 8192
check "... allocated so: 16384 IPv4 slots" eq "$(slots fp_flows4)" 16384
check "... and 16384 IPv6 slots" eq "$(slots fp_flows6)" 16384
shown() { fastpath status | grep -q "at most $1 each, $2 MiB a table"; }
check "... which status shows" shown 8192 1.0
tb_udp_server 6000
tb_share_start
check "... and the fastpath carries a conversation" \
	cli "$FP_UDP" client 198.19.2.2 6000 2000 "$TB_SETTLE_MS"
check "... (>= 90% of it)" tb_share_at_least 90

tb_reattach explicit --flows 2048 || exit 1
check "--flows wins over nf_conntrack_max" eq "$(tb_status | jq .max_flows)" 2048
check "... allocated so: 4096 slots" eq "$(slots fp_flows4)" 4096

echo 0 >"$ct_max" # no limit
tb_reattach unlimited || exit 1
check "conntrack without a limit: 65536" eq "$(tb_status | jq .max_flows)" 65536
check "... 8 MiB a table" shown 65536 8.0
tb_done
