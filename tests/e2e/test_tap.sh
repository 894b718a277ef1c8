#!/bin/bash
# A virtual machine on the router's LAN, behind a tap device as QEMU runs one: fp-tap is
# the guest, writing its frames with a virtio-net header, its UDP checksums partial as a
# virtio NIC with checksum offload (every Linux guest's default) leaves them for the host
# to finish. An XDP redirect would forward them unfinished (an XDP frame carries no
# checksum state) and the server would drop every one: before this test, with the tap at
# native XDP, the conversation stalled at its first offloaded datagram.
# - --mode auto takes the tc hook for a tap, whose helpers keep partial checksums right:
#   the guest's traffic is forwarded both ways, IPv4 through masquerade and IPv6;
# - at native and generic XDP (--mode), the guest's partial checksums pass to the kernel
#   (pass_partial_csum) and its complete ones, and the replies, are forwarded. (Generic
#   XDP's redirect hands the skb to the veth's xmit as it is, still CHECKSUM_PARTIAL, and
#   the server's stack takes that for checked: here only the counter shows what a NIC
#   would have sent wrong.)
#
#  ns rtr: t0 198.18.3.1/24 2001:2:0:3::1/64 (tap) --- the guest 198.18.3.2 2001:2:0:3::2
. "$(dirname "$0")/testbed.sh"
tb_setup
modprobe -q tun 2>/dev/null
[ -c /dev/net/tun ] || tb_skip "no tun device in this kernel"

FP_TAP=$TB_BUILD/fp-tap
VM_MAC=02:00:00:00:03:02
rtr ip tuntap add dev t0 mode tap
ip -n "$TB_RTR" -b - <<-EOF
addr add 198.18.3.1/24 dev t0
addr add 2001:2:0:3::1/64 dev t0 nodad
link set t0 up
neigh add 198.18.3.2 lladdr $VM_MAC dev t0 nud permanent
neigh add 2001:2:0:3::2 lladdr $VM_MAC dev t0 nud permanent
EOF
srv ip route add 2001:2:0:3::/64 via 2001:2:0:2::1
rtr nft add rule inet fw forward iifname t0 oifname r1 accept
rtr_mac=$(rtr ip -j link show t0 | jq -r '.[0].address')
# The WAN finishes checksums in software, where a NIC would in hardware: a partial checksum
# forwarded with a wrong seed shows at the server, even from an skb (generic XDP, tc).
rtr ethtool -K r1 tx off >/dev/null
tb_udp_server 6000

# guest ADDR PORT N partial|complete: a conversation of the guest from ADDR and PORT with
# the server's port 6000; its result line goes to the log, its status is the test's.
guest() {
	local server=198.19.2.2 out rc

	[[ $1 == *:* ]] && server=2001:2:0:2::2
	out=$(rtr "$FP_TAP" t0 "$VM_MAC" "$rtr_mac" "$1" "$2" "$server" 6000 "$3" "$4")
	rc=$?
	tb_log "    guest $1:$2 $4: $out"
	return $rc
}
csum_errors() { srv nstat -az UdpInCsumErrors Udp6InCsumErrors | awk 'NR > 1 { n += $2 } END { print n + 0 }'; }
stats_before() { fwd_before=$(tb_stat forwarded) partial_before=$(tb_stat pass_partial_csum); }
forwarded() { echo $(($(tb_stat forwarded) - fwd_before)); }
partial() { echo $(($(tb_stat pass_partial_csum) - partial_before)); }

check "without the fastpath, the guest's partial checksums arrive (kernel path)" \
	guest 198.18.3.2 5000 100 partial

# --mode auto: the tc hook.
E2E_MODE= tb_attach t0 || exit 1
check "auto attaches the tap at the tc hook, and says why" bash -c \
	"$(declare -f fastpath); TB_RTR=$TB_RTR FASTPATH_BIN=$FASTPATH_BIN TB_PIN=$TB_PIN \
	 fastpath status | grep -q 't0 (tc (.*): a tap, whose guest sends partial checksums'"
errors_before=$(csum_errors)
stats_before
check "tc hook: 2000 datagrams with partial checksums echo intact through masquerade" \
	guest 198.18.3.2 5002 2000 partial
check "... both ways on the fastpath (>= 3600 forwarded)" ge "$(forwarded)" 3600
stats_before
check "... and over IPv6" guest 2001:2:0:3::2 5004 2000 partial
check "... both ways on the fastpath (>= 3600 forwarded)" ge "$(forwarded)" 3600
check "... the server saw no bad checksum" eq "$(csum_errors)" "$errors_before"
fastpath detach >/dev/null

# Each XDP mode, on fresh flows (a source port for each conversation).
port=5010
for mode in native generic; do
	E2E_MODE=$mode tb_attach t0 || exit 1
	check "$mode: the tap is attached at XDP" \
		bash -c "ip -n $TB_RTR -d link show t0 | grep -q 'prog/xdp'"
	check "... attach says what becomes of its partial checksums" grep -qx \
		"t0: attached ($mode mode): its packets with partial checksums pass to the kernel" \
		"$TB_TMP/attach.out"
	for addr in 198.18.3.2 2001:2:0:3::2; do
		stats_before
		check "$mode, $addr: 2000 datagrams with partial checksums echo intact" \
			guest "$addr" "$port" 2000 partial
		check "... passed to the kernel, which finishes them (>= 1800 pass_partial_csum)" \
			ge "$(partial)" 1800
		check "... the replies forwarded (>= 1800)" ge "$(forwarded)" 1800
		port=$((port + 2))
		stats_before
		check "$mode, $addr: 2000 with complete checksums echo intact" \
			guest "$addr" "$port" 2000 complete
		check "... forwarded both ways (>= 3600)" ge "$(forwarded)" 3600
		# (A complete checksum equal to the pseudo-header's sum would be: 1 in 65536.)
		check "... none taken for partial" le "$(partial)" 1
		port=$((port + 2))
	done
	check "$mode: the server saw no bad checksum" eq "$(csum_errors)" "$errors_before"
	fastpath detach >/dev/null
done
tb_done
