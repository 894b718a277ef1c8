#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the end-to-end tests (test_*.sh here, or those named), each in its own testbed.
# Prints one line per test and "e2e: N passed, N failed". A test that exits 77 needs what the
# running kernel lacks and is skipped (tests/vm/ runs it on others). Needs root. Each test runs with
# its own prefix (TB); whatever it leaves under it fails the test and is removed.
cd "$(dirname "$0")" || exit 2
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(test_*.sh)
passed=0
failed=0
# What a test left behind under its prefix: namespaces (with their processes), pins, run
# and temp files. Removed, and named: a test must clean up after itself, also on failure.
sweep() { # PREFIX
	local ns left=()

	for ns in $(ip netns list | awk -v p="$1" 'index($1, p) == 1 { print $1 }'); do
		ip netns pids "$ns" | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" && left+=("netns $ns")
	done
	for f in /sys/fs/bpf/xdp-fastpath-"$1" /sys/fs/bpf/fpbench-"$1" \
		/run/xdp-fastpath/xdp-fastpath-"$1".* /tmp/xdp-fastpath-"$1".*; do
		[ -e "$f" ] && rm -rf "$f" && left+=("$f")
	done
	# tb_log_modprobe's stand-in, left as the kernel's modprobe by a test killed outright.
	case $(cat /proc/sys/kernel/modprobe 2>/dev/null) in /tmp/xdp-fastpath-"$1".*)
		echo /sbin/modprobe >/proc/sys/kernel/modprobe && left+=("kernel.modprobe") ;;
	esac
	[ ${#left[@]} = 0 ] || echo "    left behind (now removed): ${left[*]}"
	[ ${#left[@]} = 0 ]
}

# In a guest, each test's start and end go into the kernel's log, which the matrix shows
# when a guest hangs: what ran when the kernel complained.
tb_kmsg() { [ -n "${E2E_EMULATED:-}" ] && [ -w /dev/kmsg ] && echo "<4>e2e: $*" >/dev/kmsg; }

n=0
for t in "${tests[@]}"; do
	start=$SECONDS
	log=$(mktemp)
	export TB=fpe$$n$((n++))
	tb_kmsg "$t starts"
	timeout -k 30 600 bash "$t" >"$log" 2>&1
	rc=$?
	tb_kmsg "$t ended: $rc"
	if [ $rc = 77 ] && sweep "$TB" >>"$log"; then
		# The test needs what this kernel lacks (it says what): the guests run it.
		printf 'skip - e2e %s (%s)\n' "${t%.sh}" "$(sed -n 's/^skip: //p' "$log" | head -n 1)"
	elif [ $rc = 0 ] && sweep "$TB" >>"$log"; then
		passed=$((passed + 1))
		printf 'ok   - e2e %s (%ds)\n' "${t%.sh}" $((SECONDS - start))
		[ -n "$E2E_VERBOSE" ] && sed 's/^/    /' "$log"
	else
		failed=$((failed + 1))
		sweep "$TB" >>"$log"
		printf 'FAIL - e2e %s (%ds)\n' "${t%.sh}" $((SECONDS - start))
		sed 's/^/    /' "$log"
	fi
	rm -f "$log"
done
echo "e2e: $passed passed, $failed failed"
[ $failed -eq 0 ]
