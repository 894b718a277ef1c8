#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The userspace under AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer
# (make sanitize builds it into build/san): the unit tests, then end-to-end tests with the
# sanitized command and daemon. Every report goes to a log file; any report fails the run.
# A deliberate leak, built the same way, first proves the reports do arrive.
# Needs root. Ends with "sanitized: N passed, N failed".
set -u
cd "$(dirname "$0")/.." || exit 2
san=build/san
logs=$(mktemp -d /tmp/xdp-fastpath-san.XXXXXX)
trap 'rm -rf "$logs"' EXIT
export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:exitcode=86"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="log_path=$logs/asan"
export E2E_SANITIZED=1 # the daemon is slower: see tb_share_bar
passed=0
failed=0
result() { # OK DESCRIPTION
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok   - $2"
	else
		failed=$((failed + 1))
		echo "FAIL - $2"
	fi
}
reports() { find "$logs" -type f -name '*san.*' | wc -l; }

# The control: a leak the same flags must report.
printf '#include <stdlib.h>\nint main(void) { void *volatile p = malloc(64); p = 0; return 0; }\n' \
	>"$logs/leak.c"
cc -fsanitize=address,undefined -g "$logs/leak.c" -o "$logs/leak" && "$logs/leak"
[ "$(reports)" -ge 1 ] && grep -qs 'detected memory leaks' "$logs"/asan.*
result $? "sanitized: a deliberate leak is reported (the detector is live)"
rm -f "$logs"/asan.* "$logs"/ubsan.*

"$san/fp-test" >"$logs/fp-test.out" 2>&1
rc=$?
tail -n 1 "$logs/fp-test.out"
result $((rc + $(reports))) "sanitized: fp-test (datapath, conntable, attach) under ASan+UBSan"

FASTPATH_BIN=$PWD/$san/xdp-fastpath tests/e2e/run.sh test_cycles.sh test_cli_errors.sh \
	test_operator.sh test_udp.sh test_tcp_nat.sh test_ipv6.sh test_conntrack_events.sh \
	test_event_storm.sh test_daemon_faults.sh test_link_delete.sh test_tcp_close.sh \
	test_bridge.sh test_steer.sh test_ipsec.sh test_supervisor.sh
result $? "sanitized: end-to-end tests with the sanitized command and daemon"

n=$(reports)
if [ "$n" != 0 ]; then
	for f in "$logs"/*san.*; do
		echo "--- $f"
		head -n 40 "$f"
	done | sed 's/^/    /'
fi
result "$n" "sanitized: no ASan, UBSan or LSan report ($n)"
echo "sanitized: $passed passed, $failed failed"
[ "$failed" = 0 ]
