#!/bin/bash
# A bidirectional UDP stream through masquerade: offloaded once the reply is seen, every
# datagram echoed intact, the server sees the WAN address, TTL decremented once.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1

tb_udp_server 6000 "$TB_TMP/udp-server.out"
tb_share_start
check "20000 datagrams echoed intact" cli "$FP_UDP" client 198.19.2.2 6000 20000
wait "${TB_PIDS[-1]}"
read -r _ peer _ received _ ttl <"$TB_TMP/udp-server.out"
tb_log "  server: $(cat "$TB_TMP/udp-server.out")"
check "the server sees the router's WAN address" eq "$peer" 198.19.2.1
check "TTL was decremented exactly once (64 -> 63)" eq "$ttl" 63-63
check "the fastpath carried >= 95% of the packets" tb_share_at_least 95
check "the daemon's scans make the kernel spawn no modprobe" tb_scans_spawn_no_modprobe
tb_done
