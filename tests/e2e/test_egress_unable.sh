#!/bin/bash
# An attached port that stops taking redirected XDP frames: a veth does when its peer loses
# GRO, or before 5.13 its XDP program (attach checks it, but it can change later). Frames
# redirected to it would be dropped; the daemon notices within a scan (asking the kernel
# from 6.3, the peer before) and its flows go to the kernel instead, until the port can take
# frames again.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
if tb_kernel_older 5 13; then
	take_away() { cli ip link set dev c0 xdpdrv off; }
	give_back() { tb_veth_takes_redirects "$TB_CLI" c0; }
else
	take_away() { cli ethtool -K c0 gro off >/dev/null; }
	give_back() { cli ethtool -K c0 gro on >/dev/null; }
fi
unable() { [ "$(tb_status | jq '[.upper_devices[] | select(.takes_xdp_frames == false)] | length')" = 1 ]; }
able() { [ "$(tb_status | jq '[.upper_devices[] | select(.takes_xdp_frames == false)] | length')" = 0 ]; }

tb_udp_server 6000 "$TB_TMP/server.out"
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/client.out"
check "a long conversation is offloaded" tb_wait 5 eval '[ "$(tb_flow_entries)" = 2 ]'
# Each scan asks whether the ports take XDP frames. Before 6.3 the kernel has no "netdev"
# family to say so, and looking it up by name makes it spawn modprobe: asked once.
check "three scans later, the kernel spawned no modprobe" tb_scans_spawn_no_modprobe
take_away
check "the daemon sees that r0 cannot take XDP frames (within 2 s)" tb_wait 2 unable
egress0=$(tb_stat pass_egress_not_attached)
check "... and packets towards the client go to the kernel" tb_wait 2 eval \
	'ge "$(tb_stat pass_egress_not_attached)" $((egress0 + 100))'
grep -q 'cannot take redirected XDP frames' "$TB_TMP/daemon.log" ||
	check "... which the daemon logs" false
give_back
check "once it can again, the daemon sees it" tb_wait 2 able
fwd0=$(tb_stat forwarded)
check "... and the fastpath carries the flow again" tb_wait 2 eval \
	'ge "$(tb_stat forwarded)" $((fwd0 + 100))'
check "the conversation completes intact" tb_udp_conversation_end
tb_log "  client: $(cat "$TB_TMP/client.out")"
tb_done
