#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the end-to-end tests (test_*.sh here, or those named), each in its own testbed.
# Prints one line per test and "e2e: N passed, N failed". Needs root.
cd "$(dirname "$0")" || exit 2
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(test_*.sh)
passed=0
failed=0
for t in "${tests[@]}"; do
	start=$SECONDS
	log=$(mktemp)
	if timeout 600 bash "$t" >"$log" 2>&1; then
		passed=$((passed + 1))
		printf 'ok   - e2e %s (%ds)\n' "${t%.sh}" $((SECONDS - start))
		[ -n "$E2E_VERBOSE" ] && sed 's/^/    /' "$log"
	else
		failed=$((failed + 1))
		printf 'FAIL - e2e %s (%ds)\n' "${t%.sh}" $((SECONDS - start))
		sed 's/^/    /' "$log"
	fi
	rm -f "$log"
done
echo "e2e: $passed passed, $failed failed"
[ $failed -eq 0 ]
