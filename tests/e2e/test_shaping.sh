#!/bin/bash
# Shaping: an XDP redirect bypasses the egress interface's qdisc (and XDP runs before tc
# ingress), so an interface with a shaper is not offloaded unless --allow-shaping says so.
# - attach refuses such an interface, with a one-line error naming it, and changes nothing;
# - --allow-shaping attaches, and status says the shaper is bypassed;
# - a shaper added while attached takes that interface's connections back to the kernel
#   within a scan, and keeps new ones there, with status saying why.
. "$(dirname "$0")/testbed.sh"
tb_setup
tbf() { rtr tc qdisc "$1" dev r1 root tbf rate 200mbit burst 256kb latency 50ms; }

tbf add
check "attach refuses r1 with a shaping qdisc" bash -c \
	"! nsenter --net=/run/netns/$TB_RTR $FASTPATH_BIN --pin-dir $TB_PIN attach r0 r1 2>$TB_TMP/err"
check "... with one line naming r1 and the shaper" \
	bash -c "[ \$(wc -l <$TB_TMP/err) = 1 ] && grep -q 'r1 has a shaping qdisc (tbf)' $TB_TMP/err"
check "... and changes nothing" test ! -e "$TB_PIN"
check "--allow-shaping attaches anyway" tb_attach --allow-shaping
check "... and status says the shaper is bypassed" \
	bash -c "$(declare -f fastpath); TB_RTR=$TB_RTR FASTPATH_BIN=$FASTPATH_BIN TB_PIN=$TB_PIN \
		fastpath status | grep -q 'shaping qdisc tbf: bypassed'"
fastpath detach >/dev/null
tbf del
rtr ethtool -K r0 gro off >/dev/null; rtr ethtool -K r0 gro on >/dev/null
rtr ethtool -K r1 gro off >/dev/null; rtr ethtool -K r1 gro on >/dev/null

# Attached without a shaper, then one appears under a live offloaded conversation.
tb_attach || exit 1
tb_udp_server 6000
cli "$FP_UDP" client 198.19.2.2 6000 40000 >"$TB_TMP/long.out" &
long=$!
offloaded() { [ "$(tb_flow_entries)" = 2 ]; }
check "a conversation is offloaded" tb_wait 5 offloaded
tbf add
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "a shaper added to r1 takes its flows back to the kernel within a scan" tb_wait 3 no_flows
check "... and the conversation completes intact" wait "$long"
check "... status names the shaper" \
	eq "$(tb_status | jq -r '.interfaces[] | select(.name == "r1") | .shaping')" tbf
tb_udp_server 6001
tb_share_start
check "a new conversation through the shaper echoes intact" cli "$FP_UDP" client 198.19.2.2 6001 500
check "... on the kernel path, through the shaper" eq "$(tb_share_percent)" 0
tb_done
