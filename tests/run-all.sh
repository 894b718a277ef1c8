#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make test: the datapath tests (BPF_PROG_TEST_RUN, fp-test), the end-to-end tests in network
# namespaces (the core again at the tc hook), the sanitized build's tests, and a short fuzzing
# run (FUZZ_SECONDS per target, default 20), the cross builds for arm64, armhf, mipsel and
# s390x (tests/cross/run.sh), and fp-test and the e2e core on the 5.10, 5.15, 6.1 and 6.12
# kernels in qemu guests, fp-test also on a big-endian s390x, a 32-bit ARM and a 32-bit MIPS
# guest (tests/vm/matrix.sh). Needs root.
# Ends with "N passed, N failed" over all of them.
set -u
cd "$(dirname "$0")/.." || exit 2
if [ "$(id -u)" != 0 ]; then
	echo "make test needs root (BPF programs, network namespaces): try 'sudo make test'" >&2
	exit 2
fi
passed=0
failed=0
count() { # LOG TITLE: the "N passed, N failed" line of a suite's output
	local line
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		failed=$((failed + 1)) # the suite died before reporting
		echo "  $2: no result" >>"$failures"
		return
	fi
	passed=$((passed + $(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")))
	failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
}
log=$(mktemp)
failures=$(mktemp) # what failed or warned, each under the guest or suite it came from
trap 'rm -f "$log" "$failures"' EXIT

# Runs one suite: its output, its counts, and how long it took (CI stops at 90 minutes).
suite() { # TITLE COMMAND...
	local title=$1 start=$SECONDS

	shift
	echo "== $title"
	"$@" | tee "$log"
	count "$log" "$title"
	awk -v suite="$title" '/^== / { at = substr($0, 4) }
		/^(FAIL|WARN) - / { print "  " (at ? at : suite) ": " $0 }' "$log" >>"$failures"
	echo "   (took $((SECONDS - start)) s; $((SECONDS / 60)) min since make test began)"
}

suite "datapath tests (BPF_PROG_TEST_RUN)" build/fp-test
suite "end-to-end tests (namespaces, nft masquerade, conntrack)" tests/e2e/run.sh "$@"
# shellcheck disable=SC2046 # a list of test names
suite "the end-to-end core at the tc hook (--mode tc)" \
	env E2E_MODE=tc tests/e2e/run.sh $(grep -v '^#' tests/e2e/core.list)
suite "the userspace under ASan, UBSan and LSan (build/san)" tests/run-sanitized.sh
suite "fuzzing: conntrack and rtnetlink messages, the command line (libFuzzer)" \
	tests/fuzz/run.sh "${FUZZ_SECONDS:-20}"
suite "router architectures: cross builds for arm64, armhf, mipsel, s390x (qemu-user for their unit tests)" \
	tests/cross/run.sh
suite "the kernels routers ship: 5.10, 5.15, 6.1, 6.12; 6.1 big-endian, 32-bit ARM and MIPS (qemu guests)" \
	tests/vm/matrix.sh
# Again at the end, where a long log's reader looks first.
if [ -s "$failures" ]; then
	echo "== what failed or warned"
	cat "$failures"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
