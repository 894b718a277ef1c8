#!/bin/bash
# Bad input gets one line on stderr naming the cause, a non-zero exit, and changes nothing.
. "$(dirname "$0")/testbed.sh"
tb_setup

check "unknown interface" tb_expect_error 1 "nosuch0: no such interface" fastpath attach r0 nosuch0
check "... changes nothing" tb_nothing_attached
# A flow key holds 16 bits of ifindex; namespaces that live long get larger ones.
ip -n "$TB_RTR" link add big0 index 70000 type veth peer name big1
check "an ifindex no flow key holds" \
	tb_expect_error 1 "big0: its ifindex 70000 is larger than the flow keys hold" \
	fastpath attach r0 big0
check "... changes nothing" tb_nothing_attached
ip -n "$TB_RTR" link add brx type bridge
check "a bridge, not its ports" tb_expect_error 1 "brx is a bridge: attach to its ports instead" \
	fastpath attach r0 brx
check "... changes nothing" tb_nothing_attached
# A DSA switch's conduit (no kernel here has a DSA switch: dsa_loop is not built): x2 is
# made one in a mount namespace of its own, where the router's sysfs has dsa/tagging under
# it as a conduit's has. The same marker where sysfs names another device by x2's name
# (a sysfs of another network namespace) is not x2's.
ip -n "$TB_RTR" link add x2 type veth peer name x3
fake_conduit() {
	local ifindex=$1 dev=/sys/devices/virtual/net/x2
	shift
	# shellcheck disable=SC2016 # the script's own arguments
	nsenter --net=/run/netns/"$TB_RTR" unshare --mount --propagation private sh -euc '
		mount -t sysfs sysfs /sys
		mount -t tmpfs fake-dsa "$1"
		mkdir "$1/dsa"
		echo mtk >"$1/dsa/tagging"
		echo "$2" >"$1/ifindex"
		shift 2
		exec "$@"' sh "$dev" "$ifindex" "$FASTPATH_BIN" --pin-dir "$TB_PIN" "$@"
}
x2_ifindex=$(ip -n "$TB_RTR" -o link show x2 | cut -d: -f1)
check "a DSA switch's conduit, not its ports" \
	tb_expect_error 1 "x2 is a DSA switch's conduit, whose frames carry the switch's tags: attach to the switch's ports" \
	fake_conduit "$x2_ifindex" attach r0 x2
check "... changes nothing" tb_nothing_attached
# Past the check of ports, to the next one (x2's veth peer takes no XDP frames).
check "... a conduit's marker under another ifindex is not x2's" \
	tb_expect_error 1 "x2 cannot take redirected XDP frames" \
	fake_conduit $((x2_ifindex + 1000)) attach r0 x2 --mode native
check "... changes nothing" tb_nothing_attached
ip -n "$TB_RTR" link add x0 type veth peer name x1
ip -n "$TB_RTR" link set x0 up
ip -n "$TB_RTR" link set x1 up
check "native XDP on a veth whose peer cannot take XDP frames, saying why" \
	tb_expect_error 1 "x0 cannot take redirected XDP frames (its veth peer x1 .*XDP program" \
	fastpath attach r0 x0 --mode native
check "... changes nothing" tb_nothing_attached
check "not root" tb_expect_error 1 "must be run as root" \
	nsenter --net=/run/netns/"$TB_RTR" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$FASTPATH_BIN" --pin-dir "$TB_PIN" attach r0
check "... changes nothing" tb_nothing_attached
check "no BPF filesystem" tb_expect_error 1 "not on a BPF filesystem" \
	nsenter --net=/run/netns/"$TB_RTR" "$FASTPATH_BIN" --pin-dir "$TB_TMP/pins/x" attach r0
check "invalid --flows" tb_expect_error 2 "invalid value for --flows" fastpath attach r0 --flows 0x
check "invalid --flows (zero)" tb_expect_error 2 "invalid value for --flows" fastpath attach r0 --flows 0
check "invalid --mode" tb_expect_error 2 "invalid value for --mode" fastpath attach r0 --mode fast
check "an option of another command" tb_expect_error 2 "--watch does not apply to attach" \
	fastpath attach r0 --watch
check "... changes nothing" tb_nothing_attached
check "a daemon option given to status" tb_expect_error 2 "--lease does not apply to status" \
	fastpath status --lease 9
check "invalid --lease" tb_expect_error 2 "invalid value for --lease" fastpath attach r0 --lease -1
check "invalid --skip-mark" tb_expect_error 2 "invalid value for --skip-mark" fastpath attach r0 --skip-mark 0x10/x
check "invalid --event-buffer" tb_expect_error 2 "invalid value for --event-buffer" fastpath attach r0 --event-buffer 10
check "unknown command" tb_expect_error 2 "unknown command 'atach'" fastpath atach r0
check "attach without interface" tb_expect_error 2 "attach needs an interface" fastpath attach
check "detach with nothing attached" tb_expect_error 1 "nothing is attached" fastpath detach
check "stats with nothing attached" tb_expect_error 1 "not attached" fastpath stats
check "... changes nothing" tb_nothing_attached

# Another program already on an interface: refused before anything is attached.
rtr ip link set dev r0 xdpgeneric obj "$TB_ROOT/build/xdp_fastpath.bpf.o" sec xdp
check "interface with another XDP program" \
	tb_expect_error 1 "r0: already has an XDP program" fastpath attach r1 r0
check "... r1 was not attached" bash -c "! ip -n $TB_RTR link show r1 | grep -q ' xdp'"
check "... nothing pinned" test ! -e "$TB_PIN"
rtr ip link set dev r0 xdpgeneric off

# Already attached, daemon running: refused, and the instance is as it was.
tb_attach || exit 1
pid=$(tb_daemon_pid)
check "already attached" tb_expect_error 1 "r0: already attached" fastpath attach r0
check "... the daemon is the same" eq "$(tb_daemon_pid)" "$pid"
check "... both still attached" eq "$(tb_status | jq '.interfaces | length')" 2
check "detach of an interface not attached" tb_expect_error 1 "lo: not attached" fastpath detach lo
check "detach of everything" fastpath detach
check "... leaves nothing behind" tb_nothing_attached

# An instance pinned by a version whose counters were laid out otherwise (one 8-byte counter
# per entry, before they became one entry): refused by commands that read it, and detach
# removes it all the same.
tb_attach || exit 1
rm "$TB_PIN/fp_stats"
bpftool map create "$TB_PIN/fp_stats" type percpu_array key 4 value 8 entries 27 name fp_stats
check "an instance of another version" tb_expect_error 1 \
	"was made by another version of xdp-fastpath (its maps differ)" fastpath stats
check "... detach removes it" fastpath detach
check "... and leaves nothing behind" tb_nothing_attached
tb_done
