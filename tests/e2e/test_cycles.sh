#!/bin/bash
# Three full operator cycles on one router: attach, traffic, status, stats, flows, flush,
# detach. Each cycle must work as the first did and leave nothing behind: no pins, no
# daemon, no program at either hook. Under tests/run-sanitized.sh this is also the leak
# check (LSan reports any allocation the command or the daemon did not free). Attach's
# defaults (auto): native XDP in the first cycle; from 5.13 the tc hook in the others, as
# r0 and r1 do GRO from the first detach on (hooks.c), so both hooks go round.
. "$(dirname "$0")/testbed.sh"
tb_setup
offloaded_both_ways() { [ "$(tb_flow_entries)" -ge 2 ]; }
for cycle in 1 2 3; do
	tb_log "  cycle $cycle"
	tb_attach || exit 1
	tb_udp_server $((6000 + cycle)) # it exits when its client is done
	# A conversation that goes on until the fastpath has carried some of it: a fixed
	# number of datagrams can all be through the kernel before the daemon offloads it.
	tb_udp_conversation 198.19.2.2 $((6000 + cycle)) "$TB_TMP/client.out"
	check "[$cycle] the connection is offloaded" tb_wait 5 offloaded_both_ways
	fwd0=$(tb_stat forwarded)
	check "[$cycle] stats counts the packets it forwards" tb_wait 5 eval \
		'[ "$(tb_stat forwarded)" -ge $((fwd0 + 100)) ]'
	check "[$cycle] datagrams echoed intact" tb_udp_conversation_end
	check "[$cycle] status --json names the daemon" ge "$(tb_daemon_pid)" 1
	check "[$cycle] flows lists both directions" eq "$(fastpath flows --json | jq length)" 2
	check "[$cycle] flush empties the maps" fastpath flush
	pid=$(tb_daemon_pid)
	# The programs in the kernel: XDP's, and the tc hook's once a port is attached there.
	prog_ids="$(tb_status | jq .program_id) $(tb_tc_prog_id)"
	check "[$cycle] detach" fastpath detach
	check "[$cycle] ... stops the daemon" tb_wait 5 bash -c "! kill -0 $pid 2>/dev/null"
	check "[$cycle] ... removes the pins" test ! -e "$TB_PIN"
	check "[$cycle] ... detaches XDP from r0 and r1" bash -c \
		"! ip -n $TB_RTR -d link show r0 | grep -q xdp && ! ip -n $TB_RTR -d link show r1 | grep -q xdp"
	for id in $prog_ids; do
		check "[$cycle] ... and unloads its program $id (XDP or tc)" \
			bash -c "! bpftool prog show id $id >/dev/null 2>&1"
	done
	# A redirect target needs NAPI again once XDP is gone (see testbed.sh).
	rtr ethtool -K r0 gro off >/dev/null; rtr ethtool -K r0 gro on >/dev/null
	rtr ethtool -K r1 gro off >/dev/null; rtr ethtool -K r1 gro on >/dev/null
	rtr conntrack -F >/dev/null 2>&1
done
tb_done
