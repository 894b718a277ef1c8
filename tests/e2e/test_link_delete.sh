#!/bin/bash
# An attached interface that disappears: the kernel drops it from the egress map, the daemon
# removes its flows and its link pin, and keeps serving the other interfaces. Made again
# (a USB adapter plugged back in), it is attached again by the daemon once it is up, at the
# hook it had, and its traffic is offloaded again. One detached by hand is not, nor one the
# operator detaches while it is awaited.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach || exit 1
tb_udp_server 6000
cli "$FP_UDP" client 198.19.2.2 6000 100 >/dev/null
check "a connection is offloaded" tb_wait 5 eval '[ "$(tb_flow_entries)" = 2 ]'
r0=$(ip -n "$TB_RTR" -o link show r0 | cut -d: -f1)
hook=$(tb_mode_of r0)
pid=$(tb_daemon_pid)
ip -n "$TB_RTR" link del r0
no_flows() { [ "$(tb_flow_entries)" = 0 ]; }
check "deleting r0 removes its flows" tb_wait 3 no_flows
check "... and its link pin" tb_wait 3 test ! -e "$TB_PIN/link_$r0"
check "... r1 stays attached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
check "... the daemon keeps running" ge "$(tb_daemon_pid)" 1
awaited() { eq "$(tb_status | jq -c '.awaited')" "$1"; }
check "... and awaits r0 (status)" awaited '[{"name":"r0","failed":false}]'
check "... (status's text)" eval 'fastpath status | grep -q "^awaited     r0 (attached when it is there and up)"'

# As a USB adapter comes back: down, then set up, then up.
remake_r0() {
	ip link add c0 netns "$TB_CLI" type veth peer name r0 netns "$TB_RTR"
	ip -n "$TB_CLI" addr add 198.18.1.2/24 dev c0
	ip -n "$TB_CLI" link set c0 up
	ip -n "$TB_CLI" route add default via 198.18.1.1
	cli ethtool -K c0 gro on tso off gso off tx off >/dev/null
	tb_veth_takes_redirects "$TB_CLI" c0
	ip -n "$TB_RTR" addr add 198.18.1.1/24 dev r0
}
remake_r0
check "the re-created r0 is not attached while it is down" tb_wait_scans 2 30
check "... (status)" eq "$(tb_status | jq -r '.interfaces[].name')" r1
ip -n "$TB_RTR" link set r0 up
check "once up, the daemon attaches it again" tb_wait 5 eval '[ -n "$(tb_mode_of r0)" ]'
check "... at the hook it had ($hook)" eq "$(tb_mode_of r0)" "$hook"
check "... the same daemon" eq "$(tb_daemon_pid)" "$pid"
check "... which awaits it no more" awaited '[]'
check "... which says so in its log" grep -q "r0 is there: attached" "$TB_TMP/daemon.log"
# Its conntrack entry lives on (udp_timeout_stream): a dump finds it, routed by the new r0
# (whose neighbour, not known yet, its next packet resolves: out is "-" until then).
first_back() { eq "$(tb_conn_flows 198.19.2.2:6000 proto | sed 's/ [^ ]* / /g')" "r0 udp;r1 udp;"; }
check "... and the first connection is offloaded again" tb_wait 5 first_back
# A conversation that starts right away is offloaded both ways, and from then on the
# fastpath carries it. (Its share from the first datagram would measure the daemon's
# reaction to a new connection, hundreds of round trips on a loaded machine.)
tb_udp_server 6001
tb_udp_conversation 198.19.2.2 6001 "$TB_TMP/client.out"
both_ways() { eq "$(tb_conn_flows 198.19.2.2:6001 proto)" "r0 r1 udp;r1 r0 udp;"; }
check "... a conversation started then is offloaded both ways" tb_wait 3 both_ways
tb_share_start
forwarded() { ge "$(($(tb_stat forwarded) - TB_FWD0))" 4000; }
check "... its traffic goes on" tb_wait 20 forwarded
check "... and echoes intact" tb_udp_conversation_end
check "... carried by the fastpath (>= 95%)" tb_share_at_least 95

# One that comes back with a shaper is refused, as attach refuses it, and stays awaited
# until it is attached by hand.
r0=$(ip -n "$TB_RTR" -o link show r0 | cut -d: -f1)
ip -n "$TB_RTR" link del r0
check "r0 deleted again: awaited" tb_wait 5 awaited '[{"name":"r0","failed":false}]'
remake_r0
ip netns exec "$TB_RTR" tc qdisc add dev r0 root tbf rate 1gbit burst 64k latency 10ms
ip -n "$TB_RTR" link set r0 up
check "... back with a shaper: not attached" tb_wait 5 awaited '[{"name":"r0","failed":true}]'
check "... (status's text)" eval 'fastpath status | grep -q "^awaited     r0 (there, but it failed to attach"'
check "... the log says why" grep -q "r0 has a shaping qdisc (tbf)" "$TB_TMP/daemon.log"
check "... and what to do" grep -q "r0 is there, but stays detached" "$TB_TMP/daemon.log"
check "... r1 alone is attached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
ip netns exec "$TB_RTR" tc qdisc del dev r0 root
check "... without the shaper, attached by hand" fastpath attach r0
check "... and awaited no more" tb_wait 5 awaited '[]'

# Detached by hand, then deleted and made again: the daemon leaves it be.
check "r0 detached by hand" fastpath detach r0
r0=$(ip -n "$TB_RTR" -o link show r0 | cut -d: -f1)
ip -n "$TB_RTR" link del r0
remake_r0
ip -n "$TB_RTR" link set r0 up
check "... deleted, made again and up: the daemon sees it" \
	tb_wait 5 grep -q "interface $r0 (r0) was deleted" "$TB_TMP/daemon.log"
check "... and after two scans" tb_wait_scans 2 30
check "... leaves it detached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
check "... and awaits nothing" awaited '[]'
check "... the daemon attached it once only" \
	eq "$(grep -c "r0 is there: attached" "$TB_TMP/daemon.log")" 1

# Awaited, then detached by the operator (an adapter that is not coming back): awaited no
# more, whether it is away or there and refused, and left detached when it comes.
check "r0 attached by hand again" fastpath attach r0
delete_r0() {
	r0=$(ip -n "$TB_RTR" -o link show r0 | cut -d: -f1)
	ip -n "$TB_RTR" link del r0
}
delete_r0
check "... deleted: awaited" tb_wait 5 awaited '[{"name":"r0","failed":false}]'
# A daemon from before detach's requests has no FP_DAEMON_UNAWAIT in its state, and
# SIGUSR1 would end it: detach refuses and changes nothing. The daemon is made one while
# stopped, so that it cannot publish its own state meanwhile (byte 4: flags' low byte on
# the little-endian hosts that run this).
as_old_daemon() { # COMMAND...
	local state old rc

	kill -STOP "$pid"
	read -ra state <<<"$(bpftool -j map lookup pinned "$TB_PIN/fp_daemon" key 0 0 0 0 |
		jq -r '.value | join(" ")')"
	old=("${state[@]}")
	old[4]=$((old[4] & ~2))
	bpftool map update pinned "$TB_PIN/fp_daemon" key 0 0 0 0 value "${old[@]}"
	"$@"
	rc=$?
	bpftool map update pinned "$TB_PIN/fp_daemon" key 0 0 0 0 value "${state[@]}"
	kill -CONT "$pid"
	return $rc
}
check "... detach refused while an older daemon awaits it" as_old_daemon \
	tb_expect_error 1 "r0 is awaited by a daemon (pid $pid) older than this command" \
	fastpath detach r0
check "... still awaited" awaited '[{"name":"r0","failed":false}]'
check "... no request left" test ! -e /run/xdp-fastpath/"xdp-fastpath-$TB".unawait
check "... the daemon runs on" eq "$(tb_daemon_pid)" "$pid"
check "... detached while away" eval '[ "$(fastpath detach r0)" = "r0: no longer awaited" ]'
check "... awaited no more" tb_wait 5 awaited '[]'
check "... the daemon says so" \
	tb_wait 5 grep -q "r0: detached by the operator, no longer awaited" "$TB_TMP/daemon.log"
remake_r0
ip -n "$TB_RTR" link set r0 up
check "... made again and up: after two scans" tb_wait_scans 2 30
check "... still detached" eq "$(tb_status | jq -r '.interfaces[].name')" r1
check "... the same daemon" eq "$(tb_daemon_pid)" "$pid"
check "detach of a name neither there nor awaited" \
	tb_expect_error 1 "r9: no such interface" fastpath detach r9
check "... of one there, not attached nor awaited" \
	tb_expect_error 1 "r0: not attached" fastpath detach r0

check "r0 attached by hand once more" fastpath attach r0
delete_r0
remake_r0
ip netns exec "$TB_RTR" tc qdisc add dev r0 root tbf rate 1gbit burst 64k latency 10ms
ip -n "$TB_RTR" link set r0 up
check "... back with a shaper: refused" tb_wait 5 awaited '[{"name":"r0","failed":true}]'
check "... detached there" eval '[ "$(fastpath detach r0)" = "r0: no longer awaited" ]'
check "... awaited no more" tb_wait 5 awaited '[]'
ip netns exec "$TB_RTR" tc qdisc del dev r0 root

# The instance stays while a port is awaited, and goes when the last one is no more.
check "r0 attached by hand, then deleted" fastpath attach r0
delete_r0
check "... awaited" tb_wait 5 awaited '[{"name":"r0","failed":false}]'
check "r1, the last port attached, detached" fastpath detach r1
check "... the daemon runs on, awaiting r0" eq "$(tb_daemon_pid)" "$pid"
check "... (status)" awaited '[{"name":"r0","failed":false}]'
check "r0 detached too" eval '[ "$(fastpath detach r0)" = "r0: no longer awaited" ]'
check "... the instance is gone" test ! -e "$TB_PIN"
check "... with its list" eval '! ls /run/xdp-fastpath/"xdp-fastpath-$TB".{awaited,unawait} 2>/dev/null'
tb_done
