#!/bin/bash
# A bond as the WAN port (active-backup here; 802.3ad and the others alike). Its native XDP
# would run on its ports, which see its frames as their own, where the datapath finds none
# of its connections: attach takes the tc hook for it, refuses --mode native, and refuses
# a port of the bond, naming the bond. At the tc hook the fastpath carries what arrives by
# the bond; what the native LAN port sends into it the kernel forwards unless the kernel
# says the bond takes redirected XDP frames (6.3+). Needs the bonding driver: the kernel
# matrix runs it (this project's own machine's kernel has none).
#
#  cli c0 --- r0 (native)  rtr  [wan0: bond, tc hook] r1 --- s0 srv
. "$(dirname "$0")/testbed.sh"
if [ -n "${E2E_MODE:-}" ]; then
	tb_skip "this test chooses each port's hook"
fi
tb_setup
modprobe -q bonding 2>/dev/null
rtr ip link add wan0 type bond mode active-backup 2>/dev/null ||
	tb_skip "no bonding driver in this kernel"
ip -n "$TB_RTR" -b - <<-BATCH
	addr flush dev r1
	link set r1 down
	link set r1 master wan0
	link set wan0 up
	link set r1 up
	addr add 198.19.2.1/24 dev wan0
BATCH
rtr nft -f - <<-'NFT'
	add counter inet fw from_wan
	insert rule inet fw forward iifname "wan0" counter name from_wan
	add rule inet fw forward iifname "r0" oifname "wan0" accept
	add rule inet fw srcnat oifname "wan0" meta nfproto ipv4 masquerade
NFT
reaches_server() { cli ping -c1 -W1 198.19.2.2 >/dev/null; }
check "the client reaches the server through the bond" tb_wait 5 reaches_server

refused() { # PATTERN ATTACH-ARGS...: attach's one-line error, and nothing attached
	local pattern=$1
	shift
	tb_expect_error 1 "$pattern" fastpath attach "$@" && tb_nothing_attached &&
		! rtr ip link show wan0 | grep -q ' xdp'
}
check "attach refuses r1, a port of the bond, naming the bond, and attaches nothing" \
	refused "r1 is a port of wan0: attach to wan0 instead" r0 r1
check "attach refuses --mode native on the bond, and attaches nothing" \
	refused "wan0 is a bond, whose native XDP runs on its ports.*--mode tc" r0 wan0 \
	--mode native

fastpath attach r0 wan0 --log-file "$TB_TMP/daemon.log" >"$TB_TMP/attach.out" ||
	{ cat "$TB_TMP/attach.out" >&2; exit 1; }
check "attach takes the tc hook for the bond" eq "$(tb_mode_of wan0 | cut -d' ' -f1)" tc
check "... and says why" grep -q "wan0: attached (tc hook.*a bond" "$TB_TMP/attach.out"

# What arrived by the bond: what s0 sent, all of it through r1.
sent_by_server() { srv cat /sys/class/net/s0/statistics/tx_packets; }
kernel_from_wan() { rtr nft list counter inet fw from_wan | awk '/packets/ { print $2 }'; }
sent0=$(sent_by_server) kernel0=$(kernel_from_wan)
file=$(tb_random_file 10)
want=$(sha256sum <"$file" | cut -d' ' -f1)
check "10 MB down through the bond arrive intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "10 MB up arrive intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
tb_udp_server 6000
check "UDP through the bond echoes intact" cli "$FP_UDP" client 198.19.2.2 6000 1000
from_wan_share_at_least() { # PERCENT (tb_share_bar)
	local want sent=$(($(sent_by_server) - sent0)) kernel=$(($(kernel_from_wan) - kernel0))
	want=$(tb_share_bar "$1")
	tb_log "    $sent packets arrived by the bond, the kernel forwarded $kernel of them"
	ge $(((sent - kernel) * 100 / (sent + 1))) "$want"
}
check "the fastpath carried >= 90% of what arrived by the bond" from_wan_share_at_least 90
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
# From 6.3 the kernel says the bond takes XDP frames as its port does (r1, whose peer does
# GRO); before, the daemon guesses it does not, as for any port at the tc hook.
takes_frames=$(tb_status | jq '[.upper_devices[] | select(.name == "wan0")] | length == 0')
if tb_kernel_older 6 3; then
	check "the daemon sends what r0 sends into the bond through the kernel (before 6.3)" \
		eq "$takes_frames" false
else
	check "the kernel says the bond takes redirected XDP frames (6.3+)" eq "$takes_frames" true
fi
tb_done
