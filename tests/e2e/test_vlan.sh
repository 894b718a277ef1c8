#!/bin/bash
# 802.1Q as on a wire, below the routed interfaces:
# 1. A LAN on VLAN 7 of the attached port: the client tags its frames (c0.7), the router's
#    LAN address is on r0.7, and the fastpath, attached to r0, strips the tag on the way in
#    and pushes it on the way out. The client's VLAN device takes only tagged frames, so a
#    transfer that arrives intact proves the tags.
# 2. A bridge over a VLAN port (OpenWrt's swconfig layout, br-lan over eth0.1): VLAN 8 of
#    r0 is brlan's port; flows are keyed by the bridge and leave tagged.
# 3. VLAN offload on, as veths and most drivers have it: the client's veth sends its tags
#    beside the frames, so XDP on r0 would see VLAN 7's frames untagged. auto puts r0 on
#    the tc hook, which reads the tags; --mode native says what it leaves to the kernel
#    (the VLAN's incoming direction), the daemon logs it, and no connection is lost. A
#    veth's own receive offload flag changes nothing: with tags in the frames, auto keeps
#    native XDP.
# Needs 802.1Q devices, which this project's own machine's kernel does not build: the kernel
# matrix (tests/vm/) runs it in guests.
. "$(dirname "$0")/testbed.sh"
tb_setup
rtr ip link add link r0 name r0.7 type vlan id 7 2>/dev/null ||
	tb_skip "no 802.1Q VLAN devices in this kernel"
# Tags travel in the frames: no VLAN offload on either end of the wire.
cli ethtool -K c0 rxvlan off txvlan off >/dev/null
rtr ethtool -K r0 rxvlan off txvlan off >/dev/null
cli ip link add link c0 name c0.7 type vlan id 7
cli ip addr add 198.18.7.2/24 dev c0.7
cli ip link set c0.7 up
rtr ip addr add 198.18.7.1/24 dev r0.7
rtr ip link set r0.7 up
cli ip route add 198.19.2.0/24 via 198.18.7.1 dev c0.7
rtr nft add rule inet fw forward iifname r0.7 oifname r1 accept
cli ping -c1 -W5 198.19.2.2 >/dev/null || { tb_fail "VLAN 7 does not reach the server"; exit 1; }
tb_attach || exit 1
file=$(tb_random_file "${VLAN_TEST_MB:-20}")
want=$(sha256sum <"$file" | cut -d' ' -f1)

check "status shows VLAN 7 above r0" eq \
	"$(tb_status | jq -c '.upper_devices[] | select(.name == "r0.7") | [.kind, .port, .vlan]')" \
	'["vlan","r0",7]'
tb_share_start
check "download over VLAN 7 arrives intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "the server saw the router's WAN address" eq "$(cat "$TB_TMP/peer")" 198.19.2.1
# A paced upload, so that its flows can be looked at while it runs.
tb_paced_transfer "$file" up 198.19.2.2 5003 2m "$TB_TMP/up7"
up=$TB_PACED
tb_check_conn_flows "flows: keyed by r0.7 from the LAN; towards it, out of r0 with tag 7" \
	198.19.2.2:5003 out_vlan "r0.7 r1 0;r1 r0 7;"
wait $up
check "upload over VLAN 7 arrives intact" tb_wait 10 eval \
	'[ "$(sha256sum <"$TB_TMP/up7" | cut -d" " -f1)" = "$want" ]'
check "the fastpath carried >= 90% of the packets" tb_share_at_least 90
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0

# 2. A bridge whose port is VLAN 8 of the attached port.
cli ip link add link c0 name c0.8 type vlan id 8
cli ip addr add 198.18.8.2/24 dev c0.8
cli ip link set c0.8 up
cli ip route replace 198.19.2.0/24 via 198.18.8.1 dev c0.8
rtr ip link add link r0 name r0.8 type vlan id 8
rtr ip link add brlan type bridge
rtr ip link set r0.8 master brlan
rtr ip addr add 198.18.8.1/24 dev brlan
rtr ip link set r0.8 up
rtr ip link set brlan up
rtr nft add rule inet fw forward iifname brlan oifname r1 accept
cli ping -c1 -W5 198.19.2.2 >/dev/null || { tb_fail "brlan does not reach the server"; exit 1; }
bridge_port() { tb_status | jq -c '.upper_devices[] | select(.name == "brlan") | .ports'; }
check "status shows brlan over VLAN 8 of r0" tb_wait 5 eval '[ "$(bridge_port)" = "[\"r0.8\"]" ]'
tb_share_start
check "download through the bridge over VLAN 8 arrives intact" \
	eq "$(tb_tcp_transfer "$file" down)" "$want"
check "... carried by the fastpath (>= 90%)" tb_share_at_least 90
tb_paced_transfer "$file" down 198.19.2.2 5004 2m "$TB_TMP/down8"
down=$TB_PACED
tb_check_conn_flows "flows: keyed by brlan from the LAN; towards it, out of r0 with tag 8" \
	198.19.2.2:5004 out_vlan "brlan r1 0;r1 r0 8;"
wait $down
check "the paced download arrives intact" \
	eq "$(sha256sum <"$TB_TMP/down8" | cut -d' ' -f1)" "$want"

# 3. VLAN offload on.
cli ip route replace 198.19.2.0/24 via 198.18.7.1 dev c0.7
cli ethtool -K c0 txvlan on >/dev/null
rtr ethtool -K r0 rxvlan on >/dev/null
tb_reattach auto || exit 1
# Under E2E_MODE every port is at that hook, whatever auto would choose.
[ -z "${E2E_MODE:-}" ] && check "auto attaches r0 at the tc hook, saying why" \
	grep -q "^r0: attached (tc hook, .*VLAN offload takes r0.7's tags out of the frames" \
	"$TB_TMP/auto.out"
tb_share_start
check "with VLAN offload on, a download over VLAN 7 arrives intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.2.2 5005)" "$want"
check "... and an upload" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5006)" "$want"
check "... both carried by the fastpath (>= 90%)" tb_share_at_least 90
[ -n "${E2E_MODE:-}" ] && { tb_done; exit; }

tb_reattach native --mode native || exit 1
check "--mode native says that VLAN 7's incoming packets pass, and the fix" grep -q \
	"^r0: attached (native mode): r0.7's incoming packets pass to the kernel: VLAN offload takes their tags out before XDP (ip netns exec $TB_CLI ethtool -K c0 txvlan off)" \
	"$TB_TMP/native.out"
check "... status too" bash -c "$(declare -f fastpath); TB_RTR=$TB_RTR \
	FASTPATH_BIN=$FASTPATH_BIN TB_PIN=$TB_PIN fastpath status --json |
	jq -r '.interfaces[] | select(.name == \"r0\") | .hook_why' |
	grep -q \"r0.7's incoming packets pass to the kernel\""
check "... the daemon logs it" tb_wait 5 grep -q \
	"r0: VLAN offload takes the tags out of its frames before XDP: VLAN 7's incoming packets stay in the kernel" \
	"$TB_TMP/native.log"
tb_share_start
check "a download over VLAN 7 arrives intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.2.2 5007)" "$want"
check "... and an upload" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5008)" "$want"
check "... the kernel carrying the VLAN's incoming direction (<= 75% on the fastpath)" \
	le "$(tb_share_percent)" 75

# A veth's tags are where its peer put them: with the client's transmit offload off they
# are in the frames, whatever r0's receive offload flag says, and native XDP reads them.
cli ethtool -K c0 txvlan off >/dev/null
tb_reattach tagged || exit 1
check "with the tags in the frames, auto keeps r0 off the tc hook for them" \
	bash -c "! grep -q 'VLAN offload' $TB_TMP/tagged.out"
tb_share_start
check "... a download over VLAN 7 arrives intact" \
	eq "$(tb_tcp_transfer "$file" down 198.19.2.2 5009)" "$want"
check "... carried by the fastpath (>= 90%)" tb_share_at_least 90
tb_done
