#!/bin/bash
# A policy-based IPsec tunnel, as strongSwan sets one up between two offices: the LAN
# 198.18.1.0/24 and the far office's 198.19.8.0/24 (an address on the server) talk through
# ESP between the router and the server, not masqueraded. The route to the far office is
# an ordinary one; the kernel finds the policy after routing and encrypts. The datapath
# knows routes only: an offloaded connection would leave in the clear and the far end, whose
# policy wants ESP, would drop it. So the daemon offloads nothing an IPsec policy may take:
# - a conversation with the far office stays in the kernel, encrypted (where the kernel has
#   ESP: the server decrypts every datagram), while one with the internet is offloaded;
# - a policy added under an offloaded conversation takes it back to the kernel at once,
#   and the conversation goes on intact; deleted again, the conversation is offloaded.
# Without ESP (this project's own machine's kernel) the templates are optional (level use,
# transport): the kernel sends in the clear, and the policies are what the daemon sees.
. "$(dirname "$0")/testbed.sh"
tb_setup
rtr ip xfrm policy list >/dev/null 2>&1 || tb_skip "no xfrm in this kernel"

srv ip addr add 198.19.8.2/32 dev lo
rtr ip route add 198.19.8.0/24 via 198.19.2.2
srv ip route add 198.18.1.0/24 via 198.19.2.1 src 198.19.8.2 # the office answers as itself
rtr nft insert rule inet fw srcnat ip daddr 198.19.8.0/24 accept # as fw4's IPsec exemption

key=0x$(printf '%040x' 7) # rfc4106: a 16-byte AES key and a 4-byte salt
esp_state() { # NS SRC DST SPI
	ip -n "$1" xfrm state add src "$2" dst "$3" proto esp spi "$4" mode tunnel \
		aead 'rfc4106(gcm(aes))' "$key" 128 2>/dev/null
}
mode="mode tunnel"
if esp_state "$TB_RTR" 198.19.2.1 198.19.2.2 0x100 &&
	esp_state "$TB_RTR" 198.19.2.2 198.19.2.1 0x200 &&
	esp_state "$TB_SRV" 198.19.2.1 198.19.2.2 0x100 &&
	esp_state "$TB_SRV" 198.19.2.2 198.19.2.1 0x200; then
	esp=1
else
	# Optional (level use): the kernel refuses an optional tunnel out (6.x); transport it is.
	esp=0 mode="mode transport level use"
	rtr ip xfrm state flush
	srv ip xfrm state flush
	tb_log "    (no ESP in this kernel: optional templates, the tunnel in the clear)"
fi
out_tmpl="tmpl src 198.19.2.1 dst 198.19.2.2 proto esp $mode"
in_tmpl="tmpl src 198.19.2.2 dst 198.19.2.1 proto esp $mode"
ip -n "$TB_RTR" -b - <<-EOF
xfrm policy add src 198.18.1.0/24 dst 198.19.8.0/24 dir out $out_tmpl
xfrm policy add src 198.19.8.0/24 dst 198.18.1.0/24 dir fwd $in_tmpl
xfrm policy add src 198.19.8.0/24 dst 198.18.1.0/24 dir in $in_tmpl
EOF
ip -n "$TB_SRV" -b - <<-EOF
xfrm policy add src 198.19.8.0/24 dst 198.18.1.0/24 dir out $in_tmpl
xfrm policy add src 198.18.1.0/24 dst 198.19.8.0/24 dir in $out_tmpl
EOF
# The packets the server decrypted: the router's SA's "lifetime current" (bytes, packets).
decrypted() {
	srv ip -s xfrm state list spi 0x100 | awk '/lifetime current/ { getline; print $2 + 0; exit }'
}

tb_attach || exit 1
check "the daemon sees the three IPsec policies" \
	grep -q '3 IPsec policies: the connections they may take stay in the kernel' \
	"$TB_TMP/daemon.log"
check "... and status shows them" eq "$(tb_status | jq .ipsec_policies)" 3
check "... in its text too" eval 'fastpath status | grep -q "^ipsec       3 policies: "'
tb_udp_server 6000
tb_udp_server 6001 # an fp-udp server ends with its client's conversation
tb_share_start
check "2000 datagrams to the far office echo intact" cli "$FP_UDP" client 198.19.8.2 6000 2000
check "... none of them offloaded" eq "$(tb_conn_flows 198.19.8.2:6000 in)" ""
check "... all on the kernel's path" eq "$(tb_share_percent)" 0
if [ "$esp" = 1 ]; then
	check "... through the tunnel: the server decrypted them (>= 2000 packets)" \
		ge "$(decrypted)" 2000
fi

# An internet conversation is offloaded; a policy that takes it returns it to the kernel.
tb_udp_conversation 198.19.2.2 6001 "$TB_TMP/internet.out"
offloaded() { [ -n "$(tb_conn_flows 198.19.2.2:6001 in)" ]; }
check "a conversation with the internet is offloaded" tb_wait 10 offloaded
rtr ip xfrm policy add src 198.18.1.0/24 dst 198.19.2.2/32 dir out \
	tmpl src 198.19.2.1 dst 198.19.2.2 proto esp mode transport level use
not_offloaded() { ! offloaded; }
check "a policy that takes it returns it to the kernel within a second" tb_wait 1 not_offloaded
check "... the daemon said so" grep -q 'the IPsec policies changed (4 now): 1 connections' \
	"$TB_TMP/daemon.log"
check "... the conversation goes on" tb_udp_conversation_running
rtr ip xfrm policy delete src 198.18.1.0/24 dst 198.19.2.2/32 dir out
check "the policy deleted, it is offloaded again" tb_wait 10 offloaded
check "... and ends intact" tb_udp_conversation_end
tb_done
