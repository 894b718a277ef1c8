#!/bin/bash
# A port forward (nft dnat) from the WAN to a LAN server is offloaded too. 200 MB; 80 in an
# emulated guest.
. "$(dirname "$0")/testbed.sh"
tb_setup
rtr nft add rule inet fw dstnat iifname r1 tcp dport 8080 dnat ip to 198.18.1.2:80
tb_attach || exit 1
mb=200
[ -n "${E2E_EMULATED:-}" ] && mb=80
file=$(tb_random_file "$mb")
want=$(sha256sum <"$file" | cut -d' ' -f1)

# Here the client is on the WAN side and the server on the LAN: swap roles.
cli timeout 120 socat -d -d -u TCP-LISTEN:80,reuseaddr "OPEN:$TB_TMP/rx,creat,trunc" \
	2>"$TB_TMP/lan-server.log" &
lpid=$!
tb_wait 5 bash -c "ip netns exec $TB_CLI ss -Hltn 'sport = :80' | grep -q ."
tb_share_start
srv timeout 120 socat -u "OPEN:$file" TCP:198.19.2.1:8080
wait $lpid
check "$mb MB through the port forward arrive intact" \
	eq "$(sha256sum <"$TB_TMP/rx" | cut -d' ' -f1)" "$want"
check "the LAN server sees the WAN client" grep -q "from AF=2 198.19.2.2:" "$TB_TMP/lan-server.log"
check "the fastpath carried >= 95% of the packets" tb_share_at_least 95
tb_done
