#!/bin/bash
# Churn soak: short TCP and UDP connections opened and closed through NAT, as fast as four
# workers can, while a long TCP download and a long UDP stream run. CHURN_SECONDS long (60
# in make test; set it higher for a real soak). At the end:
# - both long transfers arrived intact, and no short connection failed;
# - every flow map entry belongs to a live conntrack entry;
# - the daemon's memory is back near where it started, and the maps empty out once
#   conntrack forgets the connections.
. "$(dirname "$0")/testbed.sh"
CHURN_SECONDS=${CHURN_SECONDS:-60}
WORKERS=4
tb_setup
tb_attach || exit 1
rss_kb() { awk '/VmRSS/ { print $2 }' /proc/"$(tb_daemon_pid)"/status; }
rss0=$(rss_kb)

# The servers: TCP answers "pong" and closes, UDP echoes.
srv "$FP_UDP" pong 7000 &
TB_PIDS+=($!)
tb_udp_server 7000
tb_wait 5 srv_listening 7000 || exit 1

# The long transfers.
file=$(tb_random_file 100)
want=$(sha256sum <"$file" | cut -d' ' -f1)
tb_tcp_transfer "$file" down >"$TB_TMP/long-tcp.sha" &
long_tcp=$!
tb_udp_server 6000
cli "$FP_UDP" client 198.19.2.2 6000 150000 >"$TB_TMP/long-udp.out" &
long_udp=$!

# The churn: each worker opens short TCP and UDP connections back to back.
for w in $(seq $WORKERS); do
	cli "$FP_UDP" churn 198.19.2.2 7000 "$CHURN_SECONDS" >"$TB_TMP/churn.$w" &
	churners+=($!)
done
wait "${churners[@]}"
read -r ok bad <<<"$(awk '{ o += $2; b += $4 } END { print o + 0, b + 0 }' "$TB_TMP"/churn.*)"
tb_log "  $ok short connections succeeded, $bad failed in ${CHURN_SECONDS}s; status:" \
	"$(tb_status | jq -c '{offloaded, offload_total, removed_total, events, overruns, errors}')"
check "thousands of short connections ($ok)" ge "$ok" $((CHURN_SECONDS * 50))
check "... none failed" eq "$bad" 0
wait "$long_tcp" # (a check's bash -c could not wait for this shell's child)
check "the long TCP download arrived intact" eq "$(cat "$TB_TMP/long-tcp.sha")" "$want"
check "the long UDP stream arrived intact" wait "$long_udp"
tb_log "  long UDP: $(cat "$TB_TMP/long-udp.out")"
# Who sent the unreachables behind any socket errors the client shows (a neighbour that
# failed to resolve under the load: the router or the client itself; a port: the server).
unreachables() { "$1" nstat -asz "$2" | awk -v name="$2" '$1 == name { print $2 }'; }
tb_log "  ICMP unreachables sent: router $(unreachables rtr IcmpOutDestUnreachs)," \
	"server $(unreachables srv IcmpOutDestUnreachs)," \
	"client $(unreachables cli IcmpOutDestUnreachs);" \
	"received by the client $(unreachables cli IcmpInDestUnreachs)"
check "the daemon reported no error" eq "$(tb_status | jq .errors)" 0

# Every flow entry has a live conntrack entry. UDP entries expire all the time (30 s after
# their exchange): conntrack is listed first, then, a second later (time for the daemon to
# apply the DESTROY events of entries already gone), the flows. An entry that expires in
# between is in both lists; only a real orphan is in the flows alone.
sleep 1.5
rtr conntrack -L 2>/dev/null | awk '{
	n = 0
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "src") s[++n] = kv[2]
		if (kv[1] == "dst") d[n] = kv[2]
		if (kv[1] == "sport") sp[n] = kv[2]
		if (kv[1] == "dport") dp[n] = kv[2]
	}
	for (j = 1; j <= 2 && j <= n; j++) print $1, s[j] ":" sp[j], d[j] ":" dp[j]
}' | sort -u >"$TB_TMP/conntrack"
sleep 1
fastpath flows --json | jq -r '.[] | "\(.proto) \(.src) \(.dst)"' | sort -u >"$TB_TMP/flows"
orphans=$(comm -23 "$TB_TMP/flows" "$TB_TMP/conntrack" | wc -l)
tb_log "  $(wc -l <"$TB_TMP/flows") flow entries, $(wc -l <"$TB_TMP/conntrack") conntrack tuples"
comm -23 "$TB_TMP/flows" "$TB_TMP/conntrack" | head -n 3 | sed 's/^/  orphan: /' >&2
check "no flow entry without a live conntrack entry ($orphans)" eq "$orphans" 0

rtr conntrack -F >/dev/null 2>&1
empty() { [ "$(tb_flow_entries)" = 0 ] && [ "$(tb_status | jq .offloaded)" = 0 ]; }
check "the maps empty out once conntrack forgets everything" tb_wait 3 empty
sleep 1.5 # a scan: it gives freed memory back
rss1=$(rss_kb)
tb_log "  daemon RSS ${rss0} kB at the start, ${rss1} kB at the end"
check "... and the daemon's memory is back near the start (< +2 MB)" ge $((rss0 + 2048)) "$rss1"
tb_done
