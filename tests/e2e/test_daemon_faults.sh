#!/bin/bash
# Faults during transfers: the daemon killed with SIGKILL, the daemon restarted, stopped, an
# entry left behind that translates otherwise, a detach.
# Each transfer must complete intact; with the daemon dead, the kernel takes over within the
# lease; nothing is dropped as invalid when flows come back to the kernel. Each transfer is
# 300 MB, the slow ones held to 40 MB/s (7.5 s); in an emulated guest, which moves 4 to
# 40 MB/s as the machine's speed varies, 80 MB held to 10 MB/s (8 s): either way the slow
# transfers go on for seconds after the lease (2 s) of a daemon killed 2 s into them.
. "$(dirname "$0")/testbed.sh"
tb_setup
# A small table (512 slots) keeps bpftool's dumps of fp_flows4 short.
tb_attach --lease 2 --flows 256 || exit 1
mb=300 rate=40m
[ -n "${E2E_EMULATED:-}" ] && mb=80 rate=10m
file=$(tb_random_file "$mb")
want=$(sha256sum <"$file" | cut -d' ' -f1)

# 1. SIGKILL mid-transfer (slowed down by a rate limit so it is still running).
tb_tcp_transfer_slow() {
	local out=$TB_TMP/slow.$RANDOM
	srv timeout 120 socat -u TCP-LISTEN:5002,reuseaddr "OPEN:$out,creat,trunc" &
	local lpid=$!
	tb_wait 5 srv_listening 5002 || return 1
	cli timeout 120 bash -c "pv -q -L $rate '$file' | socat -u - TCP:198.19.2.2:5002" || return 1
	wait $lpid || return 1
	sha256sum <"$out" | cut -d' ' -f1
	rm -f "$out"
}
tb_tcp_transfer_slow >"$TB_TMP/sha1" &
xfer=$!
sleep 2
hb0=$(tb_stat pass_heartbeat)
kill -9 "$(tb_daemon_pid)"
killed=$SECONDS
wait $xfer
tb_log "    the transfer went on for $((SECONDS - killed)) s after the kill (lease 2 s)"
check "a transfer survives SIGKILL of the daemon" eq "$(cat "$TB_TMP/sha1")" "$want"
check "after the lease the kernel carries the traffic" ge "$(($(tb_stat pass_heartbeat) - hb0))" 1000

# 2. attach again restarts the daemon, which adopts the pinned maps: their size too, so
# another --flows is not applied, with a warning (refusing would leave no daemon).
tb_attach --flows 512 2>"$TB_TMP/restart.err"
check "attach restarts a dead daemon" eq "$?" 0
check "a daemon runs again" ge "$(tb_daemon_pid)" 1
check "... warning that --flows 512 is not applied" \
	grep -q "flows 512 not applied: the flow tables keep their 256 entries" "$TB_TMP/restart.err"
check "... and the tables keep their size" eq "$(tb_status | jq .max_flows)" 256
tb_share_start
check "a transfer after the restart arrives intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
check "and the fastpath carries it again" tb_share_at_least 95
# A daemon held up beyond half its lease (5 s) says so in its log once it runs again.
kill -STOP "$(tb_daemon_pid)"
sleep 4
kill -CONT "$(tb_daemon_pid)"
said_late() { grep -q 'heartbeats [0-9.]* s apart' "$TB_TMP/daemon.log"; }
check "a daemon held up 4 s says its heartbeats were late" tb_wait 3 said_late

# 3. A clean stop (SIGTERM) returns every connection to the kernel and empties the maps in
# batches: its connections' entries, and a flow and a mark left by a daemon that died (the
# scans' walks of the table remove such a flow, test_scan; nothing else would such a mark).
tb_udp_server 6000
tb_udp_conversation 198.19.2.2 6000 "$TB_TMP/conversation.out"
offloaded() { eq "$(tb_flow_entries)" 2; }
check "a UDP conversation is offloaded" tb_wait 10 offloaded
# In the table's last slot (511), and its mark.
bpftool map update pinned "$TB_PIN/fp_marks4" key $TB_ORPHAN_KEY 0 value 1 0 0 0
tb_put_orphan 511
# Entries of a map; of fp_flows4 and fp_flows6, arrays of slots, the LIVE ones (their
# keys' last bytes).
entries() {
	bpftool -j map dump pinned "$TB_PIN/$1" |
		case $1 in
		fp_flows4) jq '[.[] | select(.value[15] | test("^0x[89a-f]"))] | length' ;;
		fp_flows6) jq '[.[] | select(.value[39] | test("^0x[89a-f]"))] | length' ;;
		*) jq length ;;
		esac
}
check "the left-over mark is in its map" eq "$(entries fp_marks4)" 1
pid=$(tb_daemon_pid)
kill -TERM "$pid"
stopped() { ! kill -0 "$pid" 2>/dev/null; }
check "the daemon stops on SIGTERM" tb_wait 10 stopped
for map in fp_flows4 fp_flows6 fp_marks4 fp_marks6; do
	check "the clean stop emptied $map" eq "$(entries $map)" 0
done
check "the conversation lost nothing across the stop" tb_udp_conversation_end

# 4. An entry a dead daemon left that translates otherwise than conntrack now does is
# replaced, not adopted: a connection can end while no daemon runs, and another take its
# tuple, translated otherwise (a new WAN address). Made here by rewriting the SNAT address
# of a live conversation's entry to one nobody has, with the daemon killed.
check "attach starts a daemon again" tb_attach
tb_udp_server 6001
tb_udp_conversation 198.19.2.2 6001 "$TB_TMP/conversation.out"
# Its slot out through the WAN: LIVE (byte 15, the key's last), to port 6001 (bytes 10-11),
# SNAT (the flags, byte 51), its SNAT address at bytes 52-55. bpftool's JSON has them as
# bytes in hex.
snat_entry() {
	bpftool -j map dump pinned "$TB_PIN/fp_flows4" |
		jq -c '.[] | select((.value[15] | test("^0x[89a-f]")) and
				    .value[10:12] == ["0x17", "0x71"] and
				    (.value[51] | test("^0x.[4567cdef]$")))'
}
snat_address() { snat_entry | jq -r '.value[52:56] | join(" ")'; }
conversation_offloaded() { [ -n "$(snat_entry)" ]; }
check "a UDP conversation is offloaded" tb_wait 10 conversation_offloaded
entry=$(snat_entry)
wan=$(snat_address)
check "the entry SNATs to the WAN address" eq "$wan" "0xc6 0x13 0x02 0x01"
pid=$(tb_daemon_pid)
kill -9 "$pid"
check "the daemon is gone" tb_wait 5 stopped
bpftool map update pinned "$TB_PIN/fp_flows4" key $(jq -r '.key | join(" ")' <<<"$entry") \
	value $(jq -r '.value[:52] + ["0xc6", "0x13", "0x02", "0x63"] + .value[56:] | join(" ")' \
		<<<"$entry")
check "the entry now SNATs to 198.19.2.99" eq "$(snat_address)" "0xc6 0x13 0x02 0x63"
# And an entry for a connection conntrack does not have: gone once the daemon is ready,
# before its heartbeat lets the datapath use the maps again.
tb_put_orphan 511
check "attach restarts the daemon" tb_attach
check "the entry of a connection conntrack does not have is gone when attach returns" \
	tb_orphan_gone 511
replaced() { eq "$(snat_address)" "$wan"; }
check "the new daemon replaced the entry: it SNATs to the WAN address again" tb_wait 5 replaced
# Echoes come back: the server got requests from the right address. (Through the entry
# adopted as it was, they went to 198.19.2.99 until the conversation's resends outlived it.)
echoes() {
	bpftool -j map dump pinned "$TB_PIN/fp_flows4" |
		jq '.[] | select((.value[15] | test("^0x[89a-f]")) and .value[8:10] == ["0x17", "0x71"]) |
			.formatted.value.flow.packets'
}
echoed=$(echoes)
echoes_back() { ge "$(($(echoes) - echoed))" 200; }
check "the fastpath carries the echoes again" tb_wait 10 echoes_back
check "the conversation lost nothing" tb_udp_conversation_end

# 5. detach mid-transfer.
tb_tcp_transfer_slow >"$TB_TMP/sha2" &
xfer=$!
sleep 2
check "detach during a transfer succeeds" fastpath detach
wait $xfer
check "the transfer survives the detach" eq "$(cat "$TB_TMP/sha2")" "$want"
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0
check "detach left no pins" test ! -e "$TB_PIN"
tb_done
