#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the libFuzzer targets: first over the committed regression inputs (each once), then
# fuzzing each for SECONDS (default 20) from the seed corpus fp-fuzz-seeds writes. Needs
# root (the conntrack target creates BPF maps). Ends with "fuzz: N passed, N failed".
#
#   tests/fuzz/run.sh [SECONDS]          FUZZ_CORPUS=DIR keeps the corpus between runs
set -u
cd "$(dirname "$0")/../.." || exit 2
seconds=${1:-20}
bin=build/fuzz
work=$(mktemp -d /tmp/xdp-fastpath-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

for target in ctnetlink:ct rtnetlink:rt cli:cli; do
	name=${target%:*}
	seeds=${target#*:}
	corpus=${FUZZ_CORPUS:+$FUZZ_CORPUS/$name}
	corpus=${corpus:-$work/corpus-$name}
	mkdir -p "$corpus" "$work/artifacts-$name"
	"$bin/fp-fuzz-seeds" "$seeds" "$corpus" || exit 2
	log=$work/$name.log
	start=$SECONDS
	# -close_fd_mask=3: the code's one-line errors are the expected answer to most inputs.
	if "$bin/fuzz-$name" -runs=0 tests/fuzz/regressions/"$seeds"/* >"$log" 2>&1 &&
		"$bin/fuzz-$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
			-close_fd_mask=3 -artifact_prefix="$work/artifacts-$name/" \
			"$corpus" >>"$log" 2>&1; then
		passed=$((passed + 1))
		printf 'ok   - fuzz %s (%ds, %s)\n' "$name" $((SECONDS - start)) \
			"$(grep -o 'Done [0-9]* runs' "$log" | tail -n 1)"
	else
		failed=$((failed + 1))
		printf 'FAIL - fuzz %s (%ds)\n' "$name" $((SECONDS - start))
		grep -aEv '^(INFO|#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED|RELOAD))' "$log" |
			head -n 30 | sed 's/^/    /'
		for crash in "$work/artifacts-$name"/*; do
			[ -e "$crash" ] || continue
			cp "$crash" "build/fuzz/$(basename "$crash")"
			echo "    input kept in build/fuzz/$(basename "$crash"); add it to" \
				"tests/fuzz/regressions/$seeds/ once fixed"
		done
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
