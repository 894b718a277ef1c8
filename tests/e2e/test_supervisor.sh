#!/bin/bash
# A supervisor's foreground attach (procd, systemd) names every interface the instance is
# to have. When the service's configuration changes, procd stops the daemon (SIGTERM) and
# runs the new command line, the interfaces still attached: that command makes the instance
# what it says. An interface no longer named is detached, a new one attached beside those
# kept, another --flows or --steer (on) makes a new instance, steering goes off without
# --steer; an unchanged command just restarts the daemon. One it names that is not there
# yet (a wireless interface at boot) is attached by the daemon when it comes.
. "$(dirname "$0")/testbed.sh"
tb_setup

SUPERVISED=
# supervise LOG ARGS...: the daemon procd would run, in the background.
supervise() {
	local log=$1
	shift
	fastpath attach --foreground "$@" >"$TB_TMP/$log.out" 2>"$TB_TMP/$log.log" &
	SUPERVISED=$!
	TB_PIDS+=("$SUPERVISED")
	tb_wait 10 tb_daemon_running || { cat "$TB_TMP/$log.out" "$TB_TMP/$log.log" >&2; return 1; }
}
# procd's stop of an instance whose command line changed: SIGTERM to the daemon (the
# background job is the shell around it), and wait for it to end.
procd_stop() {
	kill -TERM "$(tb_daemon_pid)"
	wait "$SUPERVISED"
}
attached() { tb_status | jq -c '[.interfaces[].name] | sort'; }
# A cpumap lists every CPU's key; an empty one's value is an error.
cpumap_entries() {
	bpftool map dump pinned "$TB_PIN/fp_cpus" -j |
		jq '[.[].value | select(type != "object" or (has("error") | not))] | length'
}
port=6000
# A new conversation, offloaded both ways and echoed intact.
offloads() { # [SERVER ADDRESS]
	port=$((port + 1))
	tb_udp_server $port
	tb_share_start
	cli "$FP_UDP" client "${1:-198.19.2.2}" $port 2000 "$TB_SETTLE_MS" && tb_share_at_least 90
}

check "the first start attaches r0 and r1" supervise first r0 r1 --flows 4096
check "... and offloads" offloads

procd_stop
check "SIGTERM stops the daemon and leaves the interfaces attached" \
	eq "$(attached)" '["r0","r1"]'
check "the same command restarts the daemon" supervise same r0 r1 --flows 4096
check "... keeping both" eq "$(attached)" '["r0","r1"]'
check "... and says so" grep -q "r0: already attached; restarting" "$TB_TMP/same.out"

procd_stop
check "a command without r0 starts" supervise without_r0 r1 --flows 4096
check "... and detaches r0" eq "$(attached)" '["r1"]'
check "... saying so" grep -q "r0: detached (no longer named)" "$TB_TMP/without_r0.out"

procd_stop
check "a command naming r0 again starts" supervise with_r0 r0 r1 --flows 4096
check "... attaches r0 beside r1" eq "$(attached)" '["r0","r1"]'
check "... (r1 kept as it was)" grep -q "r1: already attached" "$TB_TMP/with_r0.out"
check "... and offloads" offloads

procd_stop
check "a command with another --flows starts" supervise resized r0 r1 --flows 8192
check "... with tables of the new size" eq "$(tb_status | jq .max_flows)" 8192
check "... saying so" grep -q "change from 4096 to 8192 entries" "$TB_TMP/resized.out"
check "... on both interfaces" eq "$(attached)" '["r0","r1"]'
check "... and offloads" offloads

# --steer is fixed when the program is loaded too (its cpumap runs programs or not).
procd_stop
check "a command with --steer starts" supervise steered r0 r1 --flows 8192 --steer
check "... a new instance that steers over every CPU" \
	eq "$(tb_status | jq .steer_cpus)" "$(nproc)"
check "... saying so" grep -q "steer, which the program was loaded without" "$TB_TMP/steered.out"
check "... with a cpumap entry per CPU" eq "$(cpumap_entries)" "$(nproc)"
check "... and offloads" offloads
procd_stop
check "the command without --steer again starts" supervise unsteered r0 r1 --flows 8192
check "... and steering is off" eq "$(tb_status | jq .steer_cpus)" 0
check "... its per-CPU entries gone" eq "$(cpumap_entries)" 0
check "... the same instance kept" grep -q "r0: already attached; restarting" \
	"$TB_TMP/unsteered.out"
check "... and offloads" offloads

procd_stop
check "a command naming r3, which is not there yet, starts" supervise later r0 r1 r3 --flows 8192
check "... with r0 and r1" eq "$(attached)" '["r0","r1"]'
check "... saying r3 comes later" grep -q "r3: not there yet; attached when it is" \
	"$TB_TMP/later.out"
check "... which status shows" eq "$(tb_status | jq -c '[.awaited[].name]')" '["r3"]'
tb_add_second_link
r3_attached() { eq "$(attached)" '["r0","r1","r3"]'; }
check "... r3, once there and up, is attached" tb_wait 5 r3_attached
check "... and awaited no more" eq "$(tb_status | jq -c '.awaited')" '[]'
check "... and offloads through r3" offloads 198.19.4.2
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0

procd_stop
fastpath detach >/dev/null
tb_done
