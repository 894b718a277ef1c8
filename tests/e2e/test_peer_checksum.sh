#!/bin/bash
# A veth whose peer transmits with checksum offload (every container and namespace lab's
# default) hands the router packets whose TCP/UDP checksum is partial, to be completed by
# whoever sends them on. A redirect would forward them broken and every such connection
# would stall, so:
# - attach --mode native refuses the veth, with one line naming the peer and the command
#   that fixes it, and changes nothing; --mode auto takes the tc hook for it, which keeps
#   partial checksums right (test_tc_hook);
# - a peer that turns it on after attach takes that veth's connections back to the kernel
#   within a scan: a transfer running through it completes intact, new connections stay
#   in the kernel (status says why), and are offloaded once it is off again.
. "$(dirname "$0")/testbed.sh"
tb_setup

cli ethtool -K c0 tx on >/dev/null
check "attach --mode native refuses r0, whose peer c0 transmits with checksum offload" \
	bash -c "! nsenter --net=/run/netns/$TB_RTR $FASTPATH_BIN --pin-dir $TB_PIN attach r0 r1 \
		 --mode native 2>$TB_TMP/err"
check "... with one line naming the peer and the fix" bash -c \
	"[ \$(wc -l <$TB_TMP/err) = 1 ] &&
	 grep -q 'r0: its veth peer c0 transmits with checksum offload' $TB_TMP/err &&
	 grep -q 'ip netns exec $TB_CLI ethtool -K c0 tx off' $TB_TMP/err"
check "... and changes nothing" bash -c \
	"[ ! -e $TB_PIN ] && ! ip -n $TB_RTR link show r0 | grep -q xdp"
cli ethtool -K c0 tx off >/dev/null
tb_attach || exit 1
check "with it off, status says so" \
	eq "$(tb_status | jq -c '[.interfaces[].peer_tx_checksum]')" '[false,false]'

# An upload offloaded (12 s of file), then the client's veth turns checksum offload on
# under it.
file=$(tb_random_file 24)
want=$(sha256sum <"$file" | cut -d' ' -f1)
tb_paced_transfer "$file" up 198.19.2.2 5001 2m "$TB_TMP/up.out"
offloaded() { [ -n "$(tb_conn_flows 198.19.2.2:5001 in)" ]; }
check "an upload is offloaded" tb_wait 10 offloaded
cli ethtool -K c0 tx on >/dev/null
not_offloaded() { [ -z "$(tb_conn_flows 198.19.2.2:5001 in)" ]; }
check "the peer turning checksum offload on takes it back to the kernel within a scan" \
	tb_wait 3 not_offloaded
check "... (while it runs)" kill -0 "$TB_PACED"
check "... and the upload completes intact" wait "$TB_PACED"
check "... every byte" eq "$(sha256sum <"$TB_TMP/up.out" | cut -d' ' -f1)" "$want"
check "... the daemon said why" grep -q 'veth peer c0 transmits with checksum offload now' \
	"$TB_TMP/daemon.log"
check "... status says so" \
	eq "$(tb_status | jq -c '[.interfaces[].peer_tx_checksum]')" '[true,false]'
check "... with the fix" bash -c "$(declare -f fastpath); TB_RTR=$TB_RTR \
	FASTPATH_BIN=$FASTPATH_BIN TB_PIN=$TB_PIN fastpath status |
	grep -q 'veth peer c0 transmits with checksum offload: its connections stay in the kernel'"

tb_share_start
check "a new upload arrives intact" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5002)" "$want"
tb_udp_server 6000
check "a new UDP conversation echoes intact" cli "$FP_UDP" client 198.19.2.2 6000 500
check "... both on the kernel path" eq "$(tb_share_percent)" 0

# An upload that started while held is offloaded once the peer's offload is off again. The
# file would last 48 s (at 2 MB/s, 12 s were not enough for the steps below in a slow
# 5.10 guest); the client stops once the upload is offloaded and 1 MB more has arrived,
# and what arrived must be the file's beginning.
tb_paced_transfer "$file" up 198.19.2.2 5004 512k "$TB_TMP/held.out"
sleep 1.5
check "an upload started now stays in the kernel" eq "$(tb_conn_flows 198.19.2.2:5004 in)" ""
cli ethtool -K c0 tx off >/dev/null
said_off() { grep -q "checksum offload is off" "$TB_TMP/daemon.log"; }
check "with the peer's offload off again the daemon says so within a scan" tb_wait 3 said_off
offloaded() { [ -n "$(tb_conn_flows 198.19.2.2:5004 in)" ]; }
check "... and offloads the running upload" tb_wait 3 offloaded
check "... which goes on (1 MB more)" tb_paced_goes_on
check "... and arrives intact" tb_paced_stop_intact
tb_share_start
check "a new upload arrives intact" eq "$(tb_tcp_transfer "$file" up 198.19.2.2 5005)" "$want"
check "... carried by the fastpath" tb_share_at_least 80
tb_done
