#!/bin/bash
# While the IPv4 table is mostly empty (here 2 entries in 131072 slots), the daemon's scan
# reads the entries of the connections it knows where their hashes put them, and walks the
# whole table only every 64 scans (conntrack_sync.c): an entry no connection names, which
# only a walk finds, is gone within 64 scans, while the connections' own entries stay and
# carry their traffic. (That scans read the entries they name is test_idle's and
# test_tcp_close's: refreshes and FINs are seen through them.)
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach --scan-ms 50 || exit 1

tb_udp_server 6000
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/conversation.out"
offloaded() { eq "$(tb_flow_entries)" 2; }
check "a UDP conversation is offloaded" tb_wait 10 offloaded

tb_put_orphan 300
scans=$(tb_status | jq .scans)
check "an entry no connection names is removed" tb_wait 10 tb_orphan_gone 300
scans=$(($(tb_status | jq .scans) - scans))
check "... within 64 scans and the one under way ($scans)" le "$scans" 66
check "the conversation's entries stay" eq "$(tb_flow_entries)" 2
forwarded=$(tb_stat forwarded)
more_forwarded() { ge "$(tb_stat forwarded)" $((forwarded + 100)); }
check "... and carry it" tb_wait 10 more_forwarded
check "the conversation lost nothing" tb_udp_conversation_end
tb_done
