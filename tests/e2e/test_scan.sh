#!/bin/bash
# While the tables are mostly empty (here 2 entries in 131072 IPv4 slots, none in the
# 131072 of IPv6), the daemon's scan reads the entries of the connections it knows by their
# keys, and walks the whole tables only every 64 scans (conntrack_sync.c): an entry no
# connection names, which only a walk finds, is gone within 64 scans, while the
# connections' own entries stay and carry their traffic. (That scans read the entries
# they name is test_idle's and test_tcp_close's: refreshes and FINs are seen through them.)
# Nor does a scan read the ports' configuration (links, FDBs, qdiscs, veth peers) unless
# an event says it changed, or 10 s have passed (ports.c): what the scan then sees through
# the events is test_shaping's, test_peer_checksum's and test_egress_unable's.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach --scan-ms 50 || exit 1

tb_udp_server 6000
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/conversation.out"
offloaded() { eq "$(tb_flow_entries)" 2; }
check "a UDP conversation is offloaded" tb_wait 10 offloaded

tb_put_orphan 300
tb_put_orphan6 300
scans=$(tb_status | jq .scans)
check "an IPv4 entry no connection names is removed" tb_wait 10 tb_orphan_gone 300
check "so is an IPv6 entry" tb_wait 10 tb_orphan6_gone 300
scans=$(($(tb_status | jq .scans) - scans))
check "... within 64 scans and the one under way ($scans)" le "$scans" 66
check "the conversation's entries stay" eq "$(tb_flow_entries)" 2
forwarded=$(tb_stat forwarded)
more_forwarded() { ge "$(tb_stat forwarded)" $((forwarded + 100)); }
check "... and carry it" tb_wait 10 more_forwarded

at_rest() { tb_status | jq -r '"\(.scans) \(.port_reads)"'; }
read -r scans reads <<<"$(at_rest)"
sleep 2
read -r scans_after reads_after <<<"$(at_rest)"
check "at rest the scans go on ($((scans_after - scans)) in 2 s)" ge $((scans_after - scans)) 20
check "... without reading the ports' configuration each time ($((reads_after - reads)))" \
	le $((reads_after - reads)) 1
reads=$reads_after
rtr tc qdisc add dev r1 root pfifo
read_again() { [ "$(tb_status | jq .port_reads)" -gt "$reads" ]; }
check "a qdisc added is an event: the next scan reads the configuration" tb_wait 1 read_again
reads=$(tb_status | jq .port_reads)
cli ip link set dev c0 alias "r0's peer"
check "so is a change to a veth's peer in its own namespace" tb_wait 1 read_again
check "the conversation lost nothing" tb_udp_conversation_end
tb_done
