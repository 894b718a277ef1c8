#!/bin/bash
# 200 MB each way through masquerade with the fastpath attached: intact, NATed, and carried
# by the fastpath (>= 95% of the forwarded packets). 40 MB in an emulated guest, where that
# is still 5 to 10 s each (the matrix runs this test four times).
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
mb=200
[ -n "${E2E_EMULATED:-}" ] && mb=40
file=$(tb_random_file "$mb")
want=$(sha256sum <"$file" | cut -d' ' -f1)

tb_share_start
check "upload of $mb MB arrives intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
check "the server sees the router's WAN address" eq "$(cat "$TB_TMP/peer")" 198.19.2.1
check "download of $mb MB arrives intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "the fastpath carried >= 95% of the packets" tb_share_at_least 95
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
tb_done
