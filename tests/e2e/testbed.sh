# SPDX-License-Identifier: GPL-2.0-only
# The namespace testbed of docs/testing.md, as a library for the demo and the e2e tests.
#
#  ns cli                 ns rtr (the router)                 ns srv
#  c0 198.18.1.2/24  <--> r0 198.18.1.1/24  (LAN)
#     2001:2:0:1::2/64       2001:2:0:1::1/64
#                         r1 198.19.2.1/24  (WAN)  <-------->  s0 198.19.2.2/24
#                            2001:2:0:2::1/64                     2001:2:0:2::2/64
#  nft on rtr, like OpenWrt's fw4: masquerade out of r1, forward policy drop,
#  'ct state invalid drop', established/related accepted, LAN->WAN accepted.
#
# Source it, call tb_setup, and always tb_cleanup (it is installed as an EXIT trap).
# Everything is named with a per-run prefix: namespaces, the pin directory, temp files.

TB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# E2E_BUILD: where the programs are, under the checkout (build/s390x in the big-endian guest).
TB_BUILD=$TB_ROOT/${E2E_BUILD:-build}
FASTPATH_BIN=${FASTPATH_BIN:-$TB_BUILD/xdp-fastpath}
TB=${TB:-fpt$$}
TB_CLI=${TB}cli
TB_RTR=${TB}rtr
TB_SRV=${TB}srv
TB_CLI2=${TB}cli2 # tb_add_cli2
TB_PIN=/sys/fs/bpf/xdp-fastpath-$TB
TB_TMP=$(mktemp -d /tmp/xdp-fastpath-$TB.XXXXXX)
# A test that skips before tb_setup leaves nothing either (tb_setup installs tb_cleanup).
trap 'rm -rf "$TB_TMP"' EXIT
TB_PIDS=()
TB_EXTRA_NS=() # namespaces a test adds; tb_cleanup removes them too
TB_UNDO=()     # commands that undo what a test changed outside its namespaces; run last first

cli() { ip netns exec "$TB_CLI" "$@"; }
cli2() { ip netns exec "$TB_CLI2" "$@"; }
srv() { ip netns exec "$TB_SRV" "$@"; }
rtr() { ip netns exec "$TB_RTR" "$@"; }
# The router's xdp-fastpath: nsenter keeps the host's /sys/fs/bpf (docs/testing.md).
# E2E_MODE=tc (or any --mode) attaches every test's interfaces at that hook (run-all.sh
# runs the core like this too).
fastpath() {
	local mode=()

	[ "$1" = attach ] && [ -n "${E2E_MODE:-}" ] && mode=(--mode "$E2E_MODE")
	nsenter --net=/run/netns/"$TB_RTR" "$FASTPATH_BIN" --pin-dir "$TB_PIN" "$@" "${mode[@]}"
}

tb_log() { printf '%s\n' "$*" >&2; }
# In a guest, into the kernel's log too (as run.sh marks each test's start and end there).
tb_kmsg() { [ -n "${E2E_EMULATED:-}" ] && [ -w /dev/kmsg ] && echo "<4>e2e: $*" >/dev/kmsg; }
tb_fail() { tb_log "FAIL: $*"; return 1; }
# tb_skip REASON: the test needs what this kernel or machine lacks, or does not apply in
# this E2E_MODE; run.sh shows REASON beside "skip", and the guests that have it run it.
tb_skip() { tb_log "skip: $*"; exit 77; }

tb_setup() {
	trap tb_cleanup EXIT
	# A signal (run.sh's timeout, ^C) ends the test through the EXIT trap: it cleans up.
	trap 'exit 143' TERM
	trap 'exit 130' INT
	# In batches: each ip command costs a quarter of a second in an emulated guest.
	ip -b - <<-EOF
	netns add $TB_CLI
	netns add $TB_RTR
	netns add $TB_SRV
	link add c0 netns $TB_CLI type veth peer name r0 netns $TB_RTR
	link add s0 netns $TB_SRV type veth peer name r1 netns $TB_RTR
	EOF
	ip -n "$TB_CLI" -b - <<-EOF
	link set lo up
	addr add 198.18.1.2/24 dev c0
	addr add 2001:2:0:1::2/64 dev c0 nodad
	link set c0 up
	route add default via 198.18.1.1
	route add ::/0 via 2001:2:0:1::1
	EOF
	ip -n "$TB_RTR" -b - <<-EOF
	link set lo up
	addr add 198.18.1.1/24 dev r0
	addr add 2001:2:0:1::1/64 dev r0 nodad
	addr add 198.19.2.1/24 dev r1
	addr add 2001:2:0:2::1/64 dev r1 nodad
	link set r0 up
	link set r1 up
	EOF
	# IPv4: the server knows only its own subnet (NAT hides the LAN); IPv6 is routed.
	ip -n "$TB_SRV" -b - <<-EOF
	link set lo up
	addr add 198.19.2.2/24 dev s0
	addr add 2001:2:0:2::2/64 dev s0 nodad
	link set s0 up
	route add 2001:2:0:1::/64 via 2001:2:0:2::1
	EOF
	rtr sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	# A redirect into a veth needs NAPI on the peer (gro on). Endpoints send MTU-sized packets
	# (tso, gso off) with complete checksums (tx off): a veth hands local packets to XDP with
	# CHECKSUM_PARTIAL, which an XDP redirect cannot carry, so they would arrive corrupt.
	cli ethtool -K c0 gro on tso off gso off tx off >/dev/null
	srv ethtool -K s0 gro on tso off gso off tx off >/dev/null
	tb_veth_takes_redirects "$TB_CLI" c0
	tb_veth_takes_redirects "$TB_SRV" s0
	# At the tc hook the router's ports do GRO, as most NIC drivers do, and the endpoints
	# send with checksum offload, as a container host's veths do: the fastpath forwards
	# aggregates, with partial checksums.
	if [ "${E2E_MODE:-}" = tc ]; then
		cli ethtool -K c0 tx on >/dev/null
		srv ethtool -K s0 tx on >/dev/null
		rtr ethtool -K r0 gro on >/dev/null
		rtr ethtool -K r1 gro on >/dev/null
	fi
	rtr nft -f - <<-'NFT'
	table inet fw {
		chain forward {
			type filter hook forward priority filter; policy drop;
			counter name kernel_forwarded
			ct state invalid counter name invalid drop
			ct state established,related accept
			iifname "r0" oifname "r1" accept
			ct status dnat accept
		}
		chain dstnat {
			type nat hook prerouting priority dstnat;
		}
		chain srcnat {
			type nat hook postrouting priority srcnat;
			oifname "r1" meta nfproto ipv4 masquerade
		}
		counter kernel_forwarded { }
		counter invalid { }
	}
	NFT
	# Settle IPv6 neighbour discovery and ARP before anything is measured.
	cli ping -c1 -W2 198.19.2.2 >/dev/null && cli ping -6 -c1 -W2 2001:2:0:2::2 >/dev/null
}

# A second client on the LAN, for a bridged one: c2 198.18.1.3/24 in namespace $TB_CLI2,
# default route via 198.18.1.1, its peer r2 in the router, up and in no bridge yet.
tb_add_cli2() {
	TB_EXTRA_NS+=("$TB_CLI2")
	ip netns add "$TB_CLI2"
	ip -n "$TB_CLI2" link set lo up
	ip link add c2 netns "$TB_CLI2" type veth peer name r2 netns "$TB_RTR"
	ip -n "$TB_RTR" link set r2 up
	ip -n "$TB_CLI2" addr add 198.18.1.3/24 dev c2
	ip -n "$TB_CLI2" link set c2 up
	ip -n "$TB_CLI2" route add default via 198.18.1.1
	cli2 ethtool -K c2 gro on tso off gso off tx off >/dev/null
	tb_veth_takes_redirects "$TB_CLI2" c2
}

# A second link between router and server: r3 198.19.4.1/24 <-> s1 198.19.4.2/24 (a
# second WAN, or a second path to the same server).
tb_add_second_link() {
	ip link add s1 netns "$TB_SRV" type veth peer name r3 netns "$TB_RTR"
	ip -n "$TB_RTR" addr add 198.19.4.1/24 dev r3
	ip -n "$TB_SRV" addr add 198.19.4.2/24 dev s1
	ip -n "$TB_SRV" link set s1 up
	srv ethtool -K s1 gro on tso off gso off tx off >/dev/null
	tb_veth_takes_redirects "$TB_SRV" s1
	# Up once set up, as a port comes (test_supervisor's daemon attaches it then).
	ip -n "$TB_RTR" link set r3 up
	rtr nft add rule inet fw forward iifname r0 oifname r3 accept
	rtr nft add rule inet fw srcnat oifname r3 meta nfproto ipv4 masquerade
	rtr ping -c1 -W2 198.19.4.2 >/dev/null
}

# Before 5.13 a veth takes frames redirected to it by XDP only while it runs an XDP
# program itself (GRO is enough later): give such an endpoint one that passes everything.
tb_veth_takes_redirects() { # NS DEV
	tb_kernel_older 5 13 || return 0
	ip -n "$1" link set dev "$2" xdpdrv obj "$TB_BUILD/xdp_pass.bpf.o" sec xdp
}
# From now on the modules the kernel asks modprobe for are logged, one request a line, in
# $TB_TMP/modprobe.log (and loaded as before); tb_cleanup gives the kernel its own back.
# A kernel without modules (this machine's) spawns none: nothing to log.
tb_log_modprobe() {
	local was
	[ -e /proc/sys/kernel/modprobe ] && [ ! -e "$TB_TMP/modprobe" ] || return 0
	was=$(cat /proc/sys/kernel/modprobe)
	printf '#!/bin/sh\necho "$*" >>%q\nexec %q "$@"\n' "$TB_TMP/modprobe.log" "$was" \
		>"$TB_TMP/modprobe"
	chmod 755 "$TB_TMP/modprobe"
	TB_UNDO+=("echo $(printf %q "$was") >/proc/sys/kernel/modprobe")
	echo "$TB_TMP/modprobe" >/proc/sys/kernel/modprobe
}
# Whether the daemon's next three scans made the kernel spawn no modprobe. Asking the kernel
# for what it lacks (a netlink family older kernels do not have) can make it try to load a
# module first: a process spawned at every scan, every second, on a router.
tb_scans_spawn_no_modprobe() {
	tb_log_modprobe
	tb_wait_scans 3 30 || return 1
	eq "$(cat "$TB_TMP/modprobe.log" 2>/dev/null)" ""
}
# Waits up to SECONDS for the daemon to finish N more scans (status counts them); by then it
# has also read every event that came before the first.
tb_wait_scans() { # N SECONDS
	local until=$(($(tb_status | jq .scans) + $1))
	tb_wait "$2" eval '[ "$(tb_status | jq .scans)" -ge '"$until"' ]'
}
tb_kernel_older() { # MAJOR MINOR: the running kernel is older than MAJOR.MINOR
	local major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	[ "$major" -lt "$1" ] || { [ "$major" = "$1" ] && [ "${minor%%[!0-9]*}" -lt "$2" ]; }
}

tb_cleanup() {
	local rc=$?
	trap - EXIT
	if [ $rc != 0 ] || [ "${TB_FAILED:-0}" != 0 ]; then
		# Diagnostics for a failed test: what the fastpath and its daemon saw.
		{
			echo "--- status"; fastpath status
			echo "--- stats"; fastpath stats | grep -v ' 0$'
			echo "--- flows"; fastpath flows | head -n 20
			echo "--- daemon log"; tail -n 30 "$TB_TMP/daemon.log"
		} 2>&1 | sed 's/^/  | /' >&2
	fi
	tb_kmsg "cleanup"
	local i
	for ((i = ${#TB_UNDO[@]} - 1; i >= 0; i--)); do eval "${TB_UNDO[i]}"; done
	for pid in "${TB_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	if [ -d "$TB_PIN" ]; then
		fastpath detach >/dev/null 2>&1 || true
	fi
	for pid in "${TB_PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	# The router's veths first, in one batch: deleting a device returns once its NAPI has
	# stopped, where a namespace's deletion leaves its devices to a kernel worker that may
	# still run when the next test starts. (A 5.10 guest locked up in a veth's GRO at the
	# start of the test after such a deletion; this rules that overlap out.)
	ip -n "$TB_RTR" -o link show type veth 2>/dev/null |
		awk -F': ' '{ sub(/@.*/, "", $2); print "link del " $2 }' |
		ip -n "$TB_RTR" -force -b - 2>/dev/null
	for ns in "$TB_CLI" "$TB_RTR" "$TB_SRV" "${TB_EXTRA_NS[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	tb_kmsg "namespaces deleted"
	rm -rf "$TB_PIN" "$TB_TMP" "/run/xdp-fastpath/xdp-fastpath-$TB".* "/sys/fs/bpf/fpbench-$TB"
	return $rc
}

# Counter values: the packets nft dropped as invalid, and the fastpath's (tb_share_counters
# reads nft's forwarded packets).
tb_invalid_dropped() {
	rtr nft list counter inet fw invalid | awk '/packets/ { print $2 }'
}
tb_stat() { # NAME: a datapath counter
	fastpath stats --json | tr ',{}' '\n\n\n' | awk -F': ' -v k="\"$1\"" '$1 ~ k"$" { print $2 }' | tr -d ' '
}

# Makes a file of SIZE_MB random megabytes and prints its path.
tb_random_file() {
	local f=$TB_TMP/data-$1M
	[ -f "$f" ] || head -c "$(($1 * 1048576))" /dev/urandom >"$f"
	echo "$f"
}

# tb_tcp_transfer FILE DIR [ADDR] [PORT]: sends FILE through the router, cli->srv (DIR=up)
# or srv->cli (DIR=down: the client downloads), and prints the sha256 of what arrived.
# The address the server saw the client come from is left in $TB_TMP/peer.
tb_tcp_transfer() {
	local file=$1 dir=$2 addr=${3:-198.19.2.2} port=${4:-5001}
	local out=$TB_TMP/received.$RANDOM lpid
	local listen=TCP-LISTEN:$port,reuseaddr
	if [[ $addr == *:* ]]; then
		listen=TCP6-LISTEN:$port,reuseaddr
		addr="[$addr]"
	fi
	if [ "$dir" = up ]; then
		srv timeout 300 socat -d -d -u "$listen" "OPEN:$out,creat,trunc" 2>"$TB_TMP/server.log" &
		lpid=$!
		tb_wait 5 srv_listening "$port" || return 1
		cli timeout 300 socat -u "OPEN:$file" "TCP:$addr:$port" || return 1
	else
		srv timeout 300 socat -d -d -u "OPEN:$file" "$listen" 2>"$TB_TMP/server.log" &
		lpid=$!
		tb_wait 5 srv_listening "$port" || return 1
		cli timeout 300 socat -u "TCP:$addr:$port" "OPEN:$out,creat,trunc" || return 1
	fi
	wait "$lpid" || return 1
	sed -n 's/.*accepting connection from AF=[0-9]* \[\{0,1\}\([0-9a-f.:]*[0-9a-f]\)\]\{0,1\}:[0-9]* on.*/\1/p' \
		"$TB_TMP/server.log" >"$TB_TMP/peer"
	sha256sum <"$out" | cut -d' ' -f1
	rm -f "$out"
}
srv_listening() { srv ss -Hltn "sport = :$1" | grep -q .; }

# tb_paced_transfer FILE DIR ADDR PORT RATE OUT [CLIENT_NS]: like tb_tcp_transfer, but paced
# at RATE (pv's -L, e.g. 2m) and left running, so that its flows can be looked at; the
# client is in CLIENT_NS (default the client host's). The receiver writes OUT; TB_PACED is
# the client's pid: wait for it, then check OUT. Or, to end it early, tb_paced_goes_on and
# tb_paced_stop_intact. Each side is `timeout` itself (ip netns exec becomes it), which
# passes a signal on to the whole pipeline.
tb_paced_transfer() {
	local file=$1 dir=$2 addr=$3 port=$4 rate=$5 out=$6 ns=${7:-$TB_CLI}
	local limit=$((120 * TB_TIME_SCALE)) send="pv -q -L $rate '$file' | socat -u -" server
	if [ "$dir" = up ]; then
		ip netns exec "$TB_SRV" timeout "$limit" \
			socat -u TCP-LISTEN:"$port",reuseaddr "OPEN:$out,creat,trunc" &
	else
		ip netns exec "$TB_SRV" timeout "$limit" sh -c "$send TCP-LISTEN:$port,reuseaddr" &
	fi
	server=$!
	TB_PIDS+=($!)
	tb_wait 5 srv_listening "$port"
	if [ "$dir" = up ]; then
		ip netns exec "$ns" timeout "$limit" sh -c "$send TCP:$addr:$port" &
	else
		ip netns exec "$ns" timeout "$limit" socat -u TCP:"$addr:$port" "OPEN:$out,creat,trunc" &
	fi
	TB_PACED=$!
	TB_PIDS+=($!)
	TB_PACED_FILE=$file TB_PACED_OUT=$out
	if [ "$dir" = up ]; then
		TB_PACED_SENDER=$TB_PACED TB_PACED_RECEIVER=$server
	else
		TB_PACED_SENDER=$server TB_PACED_RECEIVER=$TB_PACED
	fi
}
# tb_paced_goes_on: the paced transfer delivers 1 MB more than it had (within 10 s).
tb_paced_goes_on() {
	local want=$(($(stat -c %s "$TB_PACED_OUT") + 1048576))
	paced_delivered() { [ "$(stat -c %s "$TB_PACED_OUT")" -ge "$1" ]; }
	tb_wait 10 paced_delivered "$want"
}
# tb_paced_stop_intact: stops the paced transfer's sender; what arrived is the file's
# beginning. (A transfer that must last across slow steps ends this way, not by running
# out of file before them.)
tb_paced_stop_intact() {
	local got
	kill "$TB_PACED_SENDER"
	wait "$TB_PACED_RECEIVER"
	got=$(stat -c %s "$TB_PACED_OUT")
	tb_log "    $got bytes arrived"
	[ "$got" -gt 0 ] && cmp -s -n "$got" "$TB_PACED_FILE" "$TB_PACED_OUT"
}

FP_UDP=$TB_BUILD/fp-udp
# fp-udp client's SETTLE_MS for a short conversation whose share of the fastpath a test
# checks: the first datagram, then a pause for the daemon to offload it, then the rest.
# 2000 echoes take 50 ms here, and a daemon 20 ms late on a loaded machine cost 10%.
# shellcheck disable=SC2034 # the tests use it
TB_SETTLE_MS=200
# tb_udp_server PORT [OUTFILE]: an fp-udp echo server on the server host, listening on return.
tb_udp_server() {
	srv "$FP_UDP" server "$1" >"${2:-/dev/null}" &
	TB_PIDS+=($!)
	tb_wait 5 srv_udp_listening "$1"
}
srv_udp_listening() { srv ss -Hlun "sport = :$1" | grep -q .; }

# tb_udp_conversation ADDR PORT OUTFILE: an fp-udp client on the client host that keeps a
# conversation going, however fast the machine, until tb_udp_conversation_end, which
# waits for every datagram sent to come back and returns the client's status. (ip netns
# exec becomes the client: $! is its pid.)
tb_udp_conversation() {
	ip netns exec "$TB_CLI" "$FP_UDP" client "$1" "$2" 0 >"$3" &
	TB_UDP_CLIENT=$!
	TB_PIDS+=($!)
}
tb_udp_conversation_running() { kill -0 "$TB_UDP_CLIENT" 2>/dev/null; }
tb_udp_conversation_end() {
	kill -USR1 "$TB_UDP_CLIENT" 2>/dev/null
	wait "$TB_UDP_CLIENT"
}

# Checks: a failed check is reported and makes the test fail at its end (tb_done).
TB_FAILED=0
# tb_expect_error EXIT_CODE PATTERN COMMAND...: bad input's answer, the exit code and exactly
# one line on stderr, matching PATTERN.
tb_expect_error() {
	local code=$1 pattern=$2 rc
	shift 2
	"$@" >"$TB_TMP/out" 2>"$TB_TMP/err"
	rc=$?
	if [ "$rc" != "$code" ] || [ "$(wc -l <"$TB_TMP/err")" != 1 ] ||
		! grep -q -- "$pattern" "$TB_TMP/err"; then
		tb_log "    exit $rc (want $code), stderr: $(cat "$TB_TMP/err")"
		return 1
	fi
	tb_log "    $(cat "$TB_TMP/err")"
}
check() { # DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then
		tb_log "  ok: $what"
	else
		tb_log "  FAIL: $what"
		TB_FAILED=1
	fi
}
tb_done() {
	[ "$TB_FAILED" = 0 ]
}

tb_attach() { # [extra attach options]
	fastpath attach r0 r1 --log-file "$TB_TMP/daemon.log" "$@" >"$TB_TMP/attach.out" ||
		{ cat "$TB_TMP/attach.out" >&2; tb_fail "attach failed"; return 1; }
}
# Detaches everything, then attaches r0 and r1 anew: $TB_TMP/LOG.out gets attach's output
# and its warnings, $TB_TMP/LOG.log the daemon's log.
tb_reattach() { # LOG [extra attach options]
	local log=$1
	shift
	fastpath detach >/dev/null 2>&1
	fastpath attach r0 r1 --log-file "$TB_TMP/$log.log" "$@" >"$TB_TMP/$log.out" 2>&1 ||
		{ cat "$TB_TMP/$log.out" >&2; tb_fail "attach failed"; return 1; }
}
tb_status() { fastpath status --json; }
# The hook status gives an attached interface: "native", "tc (tcx)"...
tb_mode_of() { tb_status | jq -r --arg dev "$1" '.interfaces[] | select(.name == $dev) | .mode'; }
# What bad input must leave: nothing attached to r0 or r1, nothing pinned, no daemon.
tb_nothing_attached() {
	! ip -n "$TB_RTR" link show r0 | grep -q ' xdp' &&
		! ip -n "$TB_RTR" link show r1 | grep -q ' xdp' &&
		[ ! -e "$TB_PIN" ] && ! pgrep -f "xdp-fastpath --pin-dir $TB_PIN" >/dev/null
}
# The tc entry point's program id; empty until a port is attached at the tc hook.
tb_tc_prog_id() {
	bpftool prog show pinned "$TB_PIN/xdp_fastpath_tc" 2>/dev/null | awk -F: 'NR == 1 { print $1 }'
}
tb_flow_entries() { tb_status | jq '.flows_ipv4 + .flows_ipv6'; }
# An IPv4 flow key no connection has: 198.18.0.99:12345 -> 198.19.0.99:53, UDP, in on
# ifindex 255 (host byte order), as fp_marks4 has keys (bytes for bpftool).
TB_ORPHAN_KEY="198 18 0 99 198 19 0 99 0x30 0x39 0 53 255 0 17"
# Writes that key into fp_flows4's slot SLOT as a LIVE entry (its key's last byte), as a
# daemon that died would leave it; a walk of the table finds it wherever it lies.
tb_put_orphan() { # SLOT
	# shellcheck disable=SC2046,SC2086 # byte lists, split into bpftool's arguments
	bpftool map update pinned "$TB_PIN/fp_flows4" key $(tb_le32 "$1") \
		value $TB_ORPHAN_KEY 0x80 $(printf '0 %.0s' $(seq 48))
}
tb_orphan_gone() { # SLOT: not LIVE any more
	# shellcheck disable=SC2046
	! bpftool -j map lookup pinned "$TB_PIN/fp_flows4" key $(tb_le32 "$1") |
		jq -e '.value[15] | test("^0x[89a-f]")' >/dev/null
}
# The same in fp_flows6: 2001:2::99 port 12345 to 2001:2:0:2::99 port 53, UDP, from
# ifindex 255 (little-endian, as below), LIVE (the key's last byte), then a zeroed entry.
TB_ORPHAN6_KEY="0x20 1 0 2 $(printf '0 %.0s' $(seq 11))0x99
	0x20 1 0 2 0 2 $(printf '0 %.0s' $(seq 9))0x99 0x30 0x39 0 53 255 0 17"
tb_put_orphan6() { # SLOT
	# shellcheck disable=SC2046,SC2086
	bpftool map update pinned "$TB_PIN/fp_flows6" key $(tb_le32 "$1") \
		value $TB_ORPHAN6_KEY 0x80 $(printf '0 %.0s' $(seq 24))
}
tb_orphan6_gone() { # SLOT
	# shellcheck disable=SC2046
	! bpftool -j map lookup pinned "$TB_PIN/fp_flows6" key $(tb_le32 "$1") |
		jq -e '.value[39] | test("^0x[89a-f]")' >/dev/null
}
# A slot's index as fp_flows4's key: little-endian, as the hosts that run these tests are.
tb_le32() { printf '%d %d %d %d' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24)); }
# The flows of the connection to or from ADDR:PORT, "in out FIELD" each (FIELD: a field of
# flows --json, e.g. out_vlan), sorted and joined with ';'.
tb_conn_flows() { # ADDR:PORT FIELD
	fastpath flows --json | jq -r --arg ep "$1" --arg field "$2" \
		'.[] | select(.dst == $ep or .src == $ep) | "\(.in) \(.out) \(.[$field])"' |
		sort | tr '\n' ';'
}
# Waits up to 20 s for them to be WANT, then checks they are.
tb_check_conn_flows() { # DESCRIPTION ADDR:PORT FIELD WANT
	local what=$1 ep=$2 field=$3 want=$4
	conn_flows_are_wanted() { [ "$(tb_conn_flows "$ep" "$field")" = "$want" ]; }
	tb_wait 20 conn_flows_are_wanted
	check "$what" eq "$(tb_conn_flows "$ep" "$field")" "$want"
}
tb_daemon_pid() { tb_status | jq .daemon_pid; }
tb_daemon_running() { [ "$(tb_daemon_pid 2>/dev/null)" -gt 0 ] 2>/dev/null; }

# Waits up to SECONDS (at least; fractions allowed) for COMMAND to succeed. Timed with
# EPOCHREALTIME: bash's SECONDS ticks whole seconds, so "1" could have meant almost 0.
# TB_TIME_SCALE stretches every such wait: tests/vm/matrix.sh sets E2E_TIME_SCALE for a
# guest whose vCPUs take turns on one thread, where everything takes longer (a test whose
# traffic is paced slows its pace by it too).
TB_TIME_SCALE=${E2E_TIME_SCALE:-1}
tb_wait() { # SECONDS COMMAND...
	local deadline
	deadline=$(awk -v now="$EPOCHREALTIME" -v s="$1" -v k="$TB_TIME_SCALE" \
		'BEGIN { printf "%.6f", now + s * k }')
	shift
	until TB_QUIET=1 "$@"; do
		# Out of time: one last try, which says what it got.
		awk -v now="$EPOCHREALTIME" -v d="$deadline" 'BEGIN { exit !(now >= d) }' && {
			"$@"
			return
		}
		sleep 0.1
	done
}

# The share of forwarded packets the fastpath carried since tb_share_start, and of their
# bytes. A share's counters, read at once: the fastpath's forwarded packets, their L3 bytes
# and its GRO aggregates, the kernel's forwarded packets and their L3 bytes (nft).
tb_share_counters() {
	fastpath stats --json | jq -r '"\(.forwarded) \(.forwarded_bytes) \(.forwarded_gso)"' |
		tr '\n' ' '
	rtr nft list counter inet fw kernel_forwarded | awk '/packets/ { print $2, $4 }'
}
tb_share_start() {
	read -r TB_FWD0 TB_FWD_BYTES0 TB_FWD_GSO0 TB_KERN0 TB_KERN_BYTES0 \
		<<<"$(tb_share_counters)"
}
# The same counters, since tb_share_start.
tb_share_since_start() {
	local fwd fwd_bytes fwd_gso kern kern_bytes
	read -r fwd fwd_bytes fwd_gso kern kern_bytes <<<"$(tb_share_counters)"
	echo $((fwd - TB_FWD0)) $((fwd_bytes - TB_FWD_BYTES0)) $((fwd_gso - TB_FWD_GSO0)) \
		$((kern - TB_KERN0)) $((kern_bytes - TB_KERN_BYTES0))
}
# The fastpath's share in percent of FASTPATH and KERNEL, counted in UNIT (logged).
tb_percent() { # FASTPATH KERNEL UNIT
	tb_log "  fastpath forwarded $1 $3, kernel forwarded $2"
	echo $(($1 * 100 / ($1 + $2 + 1)))
}
tb_share_percent() {
	local fwd fwd_bytes fwd_gso kern kern_bytes
	read -r fwd fwd_bytes fwd_gso kern kern_bytes <<<"$(tb_share_since_start)"
	tb_percent "$fwd" "$kern" packets
}
# The bar for a share of PERCENT on the fastpath. In a qemu guest (tests/vm/ sets
# E2E_EMULATED) and under ASan (tests/run-sanitized.sh sets E2E_SANITIZED) the daemon needs
# more packets' time to offload a new connection, all of which the kernel forwards: the
# bar is 5 points lower there.
tb_share_bar() { # PERCENT
	if [ -n "${E2E_EMULATED:-}${E2E_SANITIZED:-}" ]; then echo $(($1 - 5)); else echo "$1"; fi
}
# The fastpath carried at least PERCENT (tb_share_bar) of the bytes and of the packets. The
# bytes say how much of the traffic it carried, the packets that it carried both ways (a way
# left to the kernel, a transfer's ACKs, is many packets and few bytes). Where it forwarded
# GRO aggregates (the tc hook) the kernel forwards them too, faster than frame by frame: the
# moment before the offload is more of the bytes there, and the bar 5 points lower. The
# packets are then as few as the aggregates are large (50 MB were 13000-15000 of them here,
# 3600 in a CI run, against the kernel's 200-1000 before the offload): more than two
# thirds of them still says both ways were offloaded, a way left to the kernel being half.
tb_share_at_least() { # PERCENT
	local want want_packets bytes packets fwd fwd_bytes fwd_gso kern kern_bytes
	read -r fwd fwd_bytes fwd_gso kern kern_bytes <<<"$(tb_share_since_start)"
	want=$(tb_share_bar "$1")
	want_packets=$want
	if [ "$fwd_gso" -gt 0 ]; then
		want=$((want - 5))
		want_packets=$((want < 67 ? want : 67))
	fi
	tb_log "  (at least $want% of the bytes, $want_packets% of the packets)"
	bytes=$(tb_percent "$fwd_bytes" "$kern_bytes" bytes)
	packets=$(tb_percent "$fwd" "$kern" packets)
	ge "$bytes" "$want" && ge "$packets" "$want_packets"
}
# Comparisons for check: a failed one says what it got (quiet while tb_wait polls).
ge() { [ "$1" -ge "$2" ] || { [ -n "${TB_QUIET:-}" ] || tb_log "    got $1, want >= $2"; return 1; }; }
le() { [ "$1" -le "$2" ] || { [ -n "${TB_QUIET:-}" ] || tb_log "    got $1, want <= $2"; return 1; }; }
eq() { [ "$1" = "$2" ] || { [ -n "${TB_QUIET:-}" ] || tb_log "    got '$1', want '$2'"; return 1; }; }

# A PPPoE WAN as an ISP hands it out (test_pppoe*.sh): pppoe-server as the access
# concentrator on the server's SRV_DEV (198.19.9.2, with SESSIONS sessions, each for
# 198.19.9.1), pppd with its kernel plugin on the router's RTR_DEV (ppp0), and masquerade
# and MSS clamping on ppp0, as OpenWrt sets them up. Exits 77 without PPPoE.
tb_pppoe_wan() { # RTR_DEV SRV_DEV SESSIONS
	local sessions=$3
	modprobe -q pppoe 2>/dev/null
	rtr test -e /proc/net/pppoe || tb_skip "no PPPoE in this kernel"
	command -v pppd >/dev/null && command -v pppoe-server >/dev/null ||
		tb_skip "pppd or pppoe-server is not installed"
	printf '%s\n' noauth mtu\ 1492 mru\ 1492 lcp-echo-interval\ 0 >"$TB_TMP/isp.options"
	for ((; sessions > 0; sessions--)); do echo 198.19.9.1; done >"$TB_TMP/isp.pool"
	srv pppoe-server -I "$2" -L 198.19.9.2 -p "$TB_TMP/isp.pool" -N "$3" \
		-O "$TB_TMP/isp.options" -X "$TB_TMP/pppoe-server.pid"
	tb_pppd_dial "$1" "$TB_TMP/pppd.log" ||
		{ tb_fail "the PPPoE session did not come up"; exit 1; }
	rtr nft -f - <<-'NFT'
	add rule inet fw forward iifname r0 oifname ppp0 accept
	add rule inet fw srcnat oifname ppp0 meta nfproto ipv4 masquerade
	add chain inet fw mangle_forward { type filter hook forward priority mangle; }
	add rule inet fw mangle_forward oifname ppp0 tcp flags syn tcp option maxseg size set rt mtu
	add rule inet fw mangle_forward iifname ppp0 tcp flags syn tcp option maxseg size set rt mtu
	NFT
	cli ping -c1 -W5 198.19.9.2 >/dev/null ||
		{ tb_fail "the server's PPP address is unreachable"; exit 1; }
}
# A paced download of FILE from the PPP server's PORT (WHAT: how it goes) is offloaded, goes
# on on the fastpath (>= 500 packets of 1 MB more) and arrives intact (test_pppoe*.sh).
tb_check_pppoe_download() { # FILE PORT WHAT
	local port=$2 fwd
	tb_paced_transfer "$1" down 198.19.9.2 "$port" 1m "$TB_TMP/down.$port"
	download_offloaded() { [ -n "$(tb_conn_flows "198.19.9.2:$port" in)" ]; }
	check "a download $3 is offloaded" tb_wait 10 download_offloaded
	fwd=$(tb_stat forwarded)
	check "... goes on (1 MB more)" tb_paced_goes_on
	check "... on the fastpath (>= 500 packets of it)" ge $(($(tb_stat forwarded) - fwd)) 500
	check "... arriving intact" tb_paced_stop_intact
}
# pppd on the router's RTR_DEV, until ppp0 has its address (60 s at most; LOG if not).
tb_pppd_dial() { # RTR_DEV LOG
	rtr pppd plugin pppoe.so "nic-$1" noauth nodetach nodefaultroute noipdefault unit 0 \
		mtu 1492 mru 1492 lcp-echo-interval 0 >"$2" 2>&1 &
	TB_PIDS+=($!)
	tb_ppp_up() { rtr ip -4 addr show dev ppp0 2>/dev/null | grep -q 'inet 198.19.9.1'; }
	tb_wait 60 tb_ppp_up || { cat "$2" >&2; return 1; }
}
