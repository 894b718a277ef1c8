#!/bin/bash
# A VLAN-filtering bridge, as OpenWrt's DSA routers configure br-lan once VLANs are set up
# ("bridge VLAN filtering"): each port is a member of VLANs, tagged or untagged, and the
# router's addresses are on the bridge itself (its PVID, untagged) and on 802.1Q devices on
# the bridge (brlan.3). The fastpath maps a port's frames to the device of their VLAN and
# sends to a host through the port the bridge learnt it on in that VLAN, tagged as the
# port's membership says.
# 1. VLAN 1, the bridge's own (PVID, untagged) on r0 and r2: cli and cli2 through brlan.
#    A port taken out of VLAN 1 under an offloaded upload: the bridge drops its frames,
#    and the fastpath routes none of them; back in VLAN 1, the upload completes.
# 2. VLAN 3 on brlan.3: tagged on r0 (cli's c0.3), untagged and PVID on r2 (cli2).
# 3. VLAN offload on: auto attaches r0, a tagged member of VLAN 3, at the tc hook.
# Needs VLAN-filtering bridges and 802.1Q devices, which this project's own machine's kernel
# does not build: the kernel matrix (tests/vm/) runs it in guests.
#
#  ns cli   c0 198.18.1.2, c0.3 198.18.3.2 --- r0 \
#                                                   brlan 198.18.1.1, brlan.3 198.18.3.1
#  ns cli2  c2 198.18.1.3 / 198.18.3.3 ------- r2 /
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_add_cli2
rtr ip link add brlan type bridge vlan_filtering 1 2>/dev/null ||
	tb_skip "no VLAN-filtering bridges in this kernel"
rtr ip -b - <<-EOF
addr del 198.18.1.1/24 dev r0
addr add 198.18.1.1/24 dev brlan
link set r0 master brlan
link set r2 master brlan
link set brlan up
EOF
# Tags travel in the frames.
cli ethtool -K c0 rxvlan off txvlan off >/dev/null
cli2 ethtool -K c2 rxvlan off txvlan off >/dev/null
rtr ethtool -K r0 rxvlan off txvlan off >/dev/null
rtr ethtool -K r2 rxvlan off txvlan off >/dev/null
rtr nft add rule inet fw forward iifname '{ "brlan", "brlan.3" }' oifname r1 accept
cli ping -c1 -W2 198.19.2.2 >/dev/null && cli2 ping -c1 -W2 198.19.2.2 >/dev/null ||
	{ tb_fail "the bridged LAN does not reach the server"; exit 1; }

fastpath attach r0 r2 r1 --log-file "$TB_TMP/daemon.log" >/dev/null || exit 1
file=$(tb_random_file 20)
want=$(sha256sum <"$file" | cut -d' ' -f1)
flows_of() { # CLIENT_ADDR: "in out out_vlan" of its connection's two flows
	fastpath flows --json | jq -r --arg a "$1" \
		'.[] | select((.src | startswith($a + ":")) or (.nat_dst | startswith($a + ":"))) |
		 "\(.in) \(.out) \(.out_vlan)"' | sort | tr '\n' ';'
}

# 1. VLAN 1, untagged.
tb_share_start
check "cli downloads through the filtering bridge, intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.2.2 5001)" "$want"
check "... and uploads" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5002)" "$want"
check "... carried by the fastpath (>= 90%)" tb_share_at_least 90
tb_paced_transfer "$file" down 198.19.2.2 5003 2m "$TB_TMP/cli2.out" "$TB_CLI2"
check "cli2's flows: keyed by brlan, and out of r2 untagged" \
	tb_wait 10 eval '[ "$(flows_of 198.18.1.3)" = "brlan r1 0;r1 r2 0;" ]'
wait "$TB_PACED"
check "... its download intact" eq "$(sha256sum <"$TB_TMP/cli2.out" | cut -d' ' -f1)" "$want"

# r2 leaves VLAN 1 under an offloaded upload of cli2's: the bridge drops its frames now, and
# the fastpath must not route them; back in VLAN 1, the upload goes on and completes.
tb_paced_transfer "$file" up 198.19.2.2 5004 2m "$TB_TMP/cli2.up" "$TB_CLI2"
check "cli2's upload is offloaded" \
	tb_wait 10 eval '[ "$(flows_of 198.18.1.3)" = "brlan r1 0;r1 r2 0;" ]'
rtr bridge vlan del dev r2 vid 1
sleep 1
# cli2 goes on sending (TCP retransmits, at least one in 3 s), the server gets none of it.
got=$(stat -c %s "$TB_TMP/cli2.up")
fwd=$(tb_stat forwarded)
sleep 3
check "out of VLAN 1, the fastpath forwards none of cli2's packets" eq "$(tb_stat forwarded)" "$fwd"
check "... and nothing more of the upload reaches the server" \
	eq "$(stat -c %s "$TB_TMP/cli2.up")" "$got"
rtr bridge vlan add dev r2 vid 1 pvid untagged
wait "$TB_PACED_RECEIVER"
check "back in VLAN 1, it completes intact" \
	eq "$(sha256sum <"$TB_TMP/cli2.up" | cut -d' ' -f1)" "$want"

# 2. VLAN 3 on brlan.3.
rtr ip link add link brlan name brlan.3 type vlan id 3
rtr bridge vlan add dev brlan vid 3 self
rtr bridge vlan add dev r0 vid 3
rtr bridge vlan del dev r2 vid 1
rtr bridge vlan add dev r2 vid 3 pvid untagged
rtr ip addr add 198.18.3.1/24 dev brlan.3
rtr ip link set brlan.3 up
cli ip link add link c0 name c0.3 type vlan id 3
cli ip addr add 198.18.3.2/24 dev c0.3
cli ip link set c0.3 up
cli ip route replace 198.19.2.0/24 via 198.18.3.1 dev c0.3
cli2 ip addr flush dev c2
cli2 ip addr add 198.18.3.3/24 dev c2
cli2 ip route add default via 198.18.3.1
cli ping -c1 -W5 198.19.2.2 >/dev/null && cli2 ping -c1 -W5 198.19.2.2 >/dev/null ||
	{ tb_fail "VLAN 3 does not reach the server"; exit 1; }
tb_share_start
check "cli downloads over VLAN 3 (tagged on r0), intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.2.2 5005)" "$want"
check "... and uploads" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5006)" "$want"
check "... carried by the fastpath (>= 90%)" tb_share_at_least 90
tb_paced_transfer "$file" up 198.19.2.2 5007 2m "$TB_TMP/up3"
check "cli's flows: keyed by brlan.3, and out of r0 with tag 3" \
	tb_wait 10 eval '[ "$(flows_of 198.18.3.2)" = "brlan.3 r1 0;r1 r0 3;" ]'
wait "$TB_PACED_RECEIVER"
check "... its upload intact" eq "$(sha256sum <"$TB_TMP/up3" | cut -d' ' -f1)" "$want"
tb_paced_transfer "$file" down 198.19.2.2 5008 2m "$TB_TMP/cli2.3" "$TB_CLI2"
check "cli2's flows (VLAN 3 untagged on r2): out of r2 untagged" \
	tb_wait 10 eval '[ "$(flows_of 198.18.3.3)" = "brlan.3 r1 0;r1 r2 0;" ]'
wait "$TB_PACED"
check "... its download intact" eq "$(sha256sum <"$TB_TMP/cli2.3" | cut -d' ' -f1)" "$want"

# 3. VLAN offload on: cli's veth sends its tags beside the frames, where XDP on r0 would not
#    see them; auto attaches r0 at the tc hook, which reads them.
cli ethtool -K c0 txvlan on >/dev/null
fastpath detach >/dev/null
fastpath attach r0 r2 r1 --log-file "$TB_TMP/offload.log" >"$TB_TMP/offload.out" || exit 1
[ -z "${E2E_MODE:-}" ] && check "with VLAN offload on, auto attaches r0 at the tc hook" \
	grep -q "^r0: attached (tc hook, .*VLAN offload takes brlan.3's tags out of the frames" \
	"$TB_TMP/offload.out"
tb_share_start
check "... a download over VLAN 3 arrives intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.2.2 5009)" "$want"
check "... and an upload" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5010)" "$want"
check "... carried by the fastpath (>= 90%)" tb_share_at_least 90
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
tb_done
