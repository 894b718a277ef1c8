#!/bin/bash
# Connections with one end on the router itself: DNS from the LAN to the router's
# resolver, a VPN server on the router, the LuCI page, the router's own downloads. The
# kernel delivers them to its sockets or sends them from them; there is nothing to forward,
# so none of them is offloaded: no flow entry (which every packet would look up, then find
# no route to forward on), no count in "offloaded". Forwarded connections beside them are
# offloaded as before, and everything arrives intact.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1

rtr_listening() { rtr ss -Hl"$1"n "sport = :$2" | grep -q .; } # t|u PORT
# tb_udp_server's on the router (an fp-udp server ends with its client's conversation).
rtr_udp_server() { # PORT
	rtr "$FP_UDP" server "$1" >/dev/null &
	TB_PIDS+=($!)
	tb_wait 5 rtr_listening u "$1" || tb_fail "the router's UDP server did not start"
}

# UDP from the LAN to the router, as to its resolver or a VPN server on it.
rtr_udp_server 6000 || exit 1
check "2000 datagrams to the router's LAN address echo intact" \
	cli "$FP_UDP" client 198.18.1.1 6000 2000
# From the internet to the router's WAN address, as to a VPN server's port.
rtr_udp_server 6002 || exit 1
check "2000 datagrams from the server to the router's WAN address echo intact" \
	srv "$FP_UDP" client 198.19.2.1 6002 2000
# TCP: the router downloads from the server, the LAN downloads from the router.
file=$(tb_random_file 4)
want=$(sha256sum <"$file" | cut -d' ' -f1)
srv timeout 60 socat -u "OPEN:$file" TCP-LISTEN:5001,reuseaddr &
TB_PIDS+=($!)
tb_wait 5 srv_listening 5001 || tb_fail "the server did not listen" || exit 1
check "the router downloads 4 MB from the server intact" \
	eq "$(rtr timeout 60 socat -u TCP:198.19.2.2:5001 - | sha256sum | cut -d' ' -f1)" "$want"
rtr timeout 60 socat -u "OPEN:$file" TCP-LISTEN:5002,reuseaddr &
TB_PIDS+=($!)
tb_wait 5 rtr_listening t 5002 || tb_fail "the router did not listen" || exit 1
check "the LAN downloads 4 MB from the router intact" \
	eq "$(cli timeout 60 socat -u TCP:198.18.1.1:5002 - | sha256sum | cut -d' ' -f1)" "$want"

# A forwarded conversation beside them, so that the daemon has certainly seen all of them.
tb_udp_server 6001
tb_udp_conversation 198.19.2.2 6001 "$TB_TMP/internet.out"
internet_offloaded() { [ -n "$(tb_conn_flows 198.19.2.2:6001 in)" ]; }
check "a forwarded conversation beside them is offloaded" tb_wait 10 internet_offloaded
router_flows() { # those of the connections above, by their ports on the router
	fastpath flows --json | jq -r '.[] | select([.src, .dst] |
		any(test(":(6000|6002|5001|5002)$"))) | "\(.src) \(.dst)"'
}
check "no flow entry for a connection with an end on the router" eq "$(router_flows)" ""
check "... the daemon counts only the forwarded one as offloaded" \
	eq "$(tb_status | jq .offloaded)" 1
check "... nor did the datapath look a next hop up in vain for one (pass_no_route)" \
	eq "$(tb_stat pass_no_route)" 0
check "the forwarded conversation ends intact" tb_udp_conversation_end
tb_done
