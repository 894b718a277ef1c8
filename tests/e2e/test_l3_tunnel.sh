#!/bin/bash
# A VPN on the router through a layer-3 tunnel, as OpenVPN's tun0 or WireGuard's wg0: the
# far network 198.18.10.0/24 (an address on the server) is routed into the tunnel and
# masqueraded out of it. Here the tunnel is a tun on each side relayed over UDP by socat,
# as OpenVPN relays it. Its packets start at the IP header, and what is sent into it must
# too: an XDP or tc program reading its packets as Ethernet frames, or redirecting frames
# into it, breaks the tunnel (the relay gets invalid packets). So:
# - attach refuses the tun, and the other layer-3 links the kernel can make (WireGuard, an
#   IPIP or GRE tunnel), with one line, and changes nothing;
# - attached to the LAN and the WAN only, the router carries UDP and TCP through the tunnel
#   intact, in the kernel, while a conversation with the internet beside it is offloaded.
. "$(dirname "$0")/testbed.sh"
tb_setup
modprobe -q tun 2>/dev/null
[ -c /dev/net/tun ] || tb_skip "no tun device in this kernel"

# The tunnel: the server listens first (a relay whose first datagram is refused ends).
tun_opts=tun-type=tun,iff-no-pi,iff-up,tun-name=tun0
srv socat "TUN:198.18.9.2/30,$tun_opts" UDP-LISTEN:7000,sourceport=7000 2>"$TB_TMP/srv-relay.log" &
TB_PIDS+=($!)
tb_wait 10 srv_udp_listening 7000 || { cat "$TB_TMP/srv-relay.log" >&2; tb_fail "the server's relay did not start"; exit 1; }
rtr socat "TUN:198.18.9.1/30,$tun_opts" UDP:198.19.2.2:7000,sourceport=7000 \
	2>"$TB_TMP/rtr-relay.log" &
TB_PIDS+=($!)
rtr_tun_up() { rtr ip link show tun0 2>/dev/null | grep -q UP; }
tb_wait 5 rtr_tun_up || tb_fail "the router's tun0 did not come up" || exit 1
srv ip addr add 198.18.10.2/32 dev lo
srv ip route replace 198.18.9.0/30 dev tun0 src 198.18.10.2 # the far side answers as itself
rtr ip route add 198.18.10.0/24 dev tun0
rtr nft add rule inet fw forward iifname r0 oifname tun0 accept
rtr nft add rule inet fw srcnat oifname tun0 masquerade
check "the tunnel carries the router's ping" rtr ping -c1 -W2 198.18.10.2

check "attach refuses the tun" tb_expect_error 1 "tun0 is a layer-3 link .*not an Ethernet port" \
	fastpath attach r0 r1 tun0
check "... changes nothing" tb_nothing_attached
check "... and --mode tc too" tb_expect_error 1 "tun0 is a layer-3 link" \
	fastpath attach r0 tun0 --mode tc
check "... changes nothing" tb_nothing_attached
# Where the kernel has them (the guests' kernels; this project's machine has none).
refused_link() { # NAME PATTERN: refused alone and beside r0, nothing changed
	check "attach refuses $1" tb_expect_error 1 "$1 is $2" fastpath attach r0 "$1"
	check "... changes nothing" tb_nothing_attached
}
if rtr ip link add wg0 type wireguard 2>/dev/null; then
	refused_link wg0 "a layer-3 link"
fi
if rtr ip link add ipip0 type ipip remote 198.19.2.2 local 198.19.2.1 2>/dev/null; then
	refused_link ipip0 "not an Ethernet port (an IP tunnel"
fi
if rtr ip link add gre0x type gre remote 198.19.2.2 local 198.19.2.1 2>/dev/null; then
	refused_link gre0x "not an Ethernet port (an IP tunnel"
fi
check "attach refuses the loopback device" \
	tb_expect_error 1 "lo is the loopback device, not an Ethernet port" fastpath attach r0 lo
check "... changes nothing" tb_nothing_attached

tb_attach || exit 1
tb_udp_server 6000
tb_udp_server 6001 # an fp-udp server ends with its client's conversation
tb_udp_conversation 198.19.2.2 6001 "$TB_TMP/internet.out"
internet_offloaded() { [ -n "$(tb_conn_flows 198.19.2.2:6001 in)" ]; }
check "beside it, a conversation with the internet is offloaded" tb_wait 10 internet_offloaded
forwarded_before=$(tb_stat forwarded)
check "2000 datagrams through the tunnel echo intact" cli "$FP_UDP" client 198.18.10.2 6000 2000
file=$(tb_random_file 4)
want=$(sha256sum <"$file" | cut -d' ' -f1)
check "4 MB up through the tunnel arrive intact" \
	eq "$(tb_tcp_transfer "$file" up 198.18.10.2 5001)" "$want"
check "... from the tunnel's address (masqueraded)" eq "$(cat "$TB_TMP/peer")" 198.18.9.1
check "4 MB down through the tunnel arrive intact" \
	eq "$(tb_tcp_transfer "$file" down 198.18.10.2 5002)" "$want"
tun_rx_packets() { srv cat /sys/class/net/tun0/statistics/rx_packets; }
check "... all through the tunnel (the server's tun0 received >= 2000 packets)" \
	ge "$(tun_rx_packets)" 2000
check "... whose relays ran throughout, without an error" \
	bash -c "kill -0 ${TB_PIDS[0]} ${TB_PIDS[1]} && ! grep -q ' E ' $TB_TMP/*-relay.log"
# Connections into the tunnel get a flow on the LAN port (the daemon offloads what arrives
# on an attached port), which finds its egress not attached and passes: none forwarded.
tunnel_packets() {
	fastpath flows --json |
		jq '[.[] | select(.in == "tun0" or .out == "tun0") | .packets] | add // 0'
}
check "... and the fastpath forwarded none of it" eq "$(tunnel_packets)" 0
check "... but passed it to the kernel (>= 2000 packets' egress not attached)" \
	ge "$(tb_stat pass_egress_not_attached)" 2000
check "the internet conversation went on, offloaded (>= 100 packets forwarded meanwhile)" \
	ge "$(tb_stat forwarded)" $((forwarded_before + 100))
check "... and ends intact" tb_udp_conversation_end
tb_done
