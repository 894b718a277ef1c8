#!/bin/bash
# The lease belongs to the running daemon: after a clean stop (SIGTERM, as systemd sends) a
# restarted daemon forwards again, also with no lease (--lease 0), whose clean stop sets a
# minimal lease so that the kernel takes over at once.
. "$(dirname "$0")/testbed.sh"
tb_setup
tb_attach --lease 0 || exit 1
file=$(tb_random_file 50)
want=$(sha256sum <"$file" | cut -d' ' -f1)
check "no lease as asked" eq "$(tb_status | jq .lease_s)" 0

pid=$(tb_daemon_pid)
kill -TERM "$pid"
stopped() { ! kill -0 "$pid" 2>/dev/null; }
check "SIGTERM stops the daemon" tb_wait 5 stopped
tb_share_start
check "with the daemon stopped, a transfer arrives intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
check "... through the kernel" eq "$(tb_share_percent)" 0

check "attach restarts the daemon" tb_attach --lease 0
check "... with no lease again" eq "$(tb_status | jq .lease_s)" 0
tb_share_start
check "a transfer after the restart arrives intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
check "... and the fastpath carries it" tb_share_at_least 95
tb_done
