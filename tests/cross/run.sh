#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The router architectures without a router: cross-builds the command and fp-test for arm64,
# armhf, mipsel and s390x (tests/cross/build.sh), and runs the tests that need no BPF syscall under
# qemu-user, which has none: the daemon's connection table, and the option parser's fuzz
# seeds and regression inputs with the fuzz target's checks (tests/fuzz/replay.c). The datapath itself runs
# big-endian in the s390x guest, and under 32-bit JITs in the armhf and mipsel guests
# (tests/vm/matrix.sh). Ends with "N passed, N failed".
#
#   tests/cross/run.sh [ARCH...]     default: arm64 armhf mipsel s390x
set -u
cd "$(dirname "$0")/../.." || exit 2

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
archs=("$@")
[ $# -gt 0 ] || archs=(arm64 armhf mipsel s390x)
for arch in "${archs[@]}"; do
	case "$arch" in
	arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64-static ;;
	armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm-static ;;
	mipsel) triplet=mipsel-linux-gnu qemu=qemu-mipsel-static ;;
	s390x) triplet=s390x-linux-gnu qemu=qemu-s390x-static ;;
	*)
		echo "FAIL - no cross build for '$arch'"
		failed=$((failed + 1))
		continue
		;;
	esac
	if tests/cross/build.sh "$arch" >"$log" 2>&1; then
		echo "ok   - $arch: xdp-fastpath and fp-test build ($(file -b "build/$arch/xdp-fastpath" | cut -d, -f1-2))"
		passed=$((passed + 1))
	else
		tail -n 20 "$log"
		echo "FAIL - $arch: the cross build"
		failed=$((failed + 1))
		continue
	fi
	# The C library comes with the cross compiler, the others from the sysroot.
	libs=build/sysroot-$arch/usr/lib/$triplet:build/sysroot-$arch/lib/$triplet
	on_target() { QEMU_LD_PREFIX=/usr/$triplet LD_LIBRARY_PATH=$libs "$qemu" "$@"; }
	for suite in conntable slottable; do
		on_target "build/$arch/fp-test" --suite $suite >"$log" 2>&1
		grep -v '^ok' "$log" | grep -v 'passed, .* failed'
		line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
		if [ -z "$line" ]; then
			echo "FAIL - $arch: fp-test --suite $suite under qemu-user gave no result"
			failed=$((failed + 1))
			continue
		fi
		n_ok=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")
		n_fail=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
		echo "$([ "$n_fail" = 0 ] && echo "ok  " || echo FAIL) - $arch: fp-test --suite $suite under qemu-user ($n_ok passed, $n_fail failed)"
		passed=$((passed + n_ok))
		failed=$((failed + n_fail))
	done

	seeds=$(mktemp -d)
	if on_target "build/$arch/fuzz/fp-fuzz-seeds" cli "$seeds" >"$log" 2>&1 &&
		on_target "build/$arch/fuzz-cli-replay" "$seeds"/* tests/fuzz/regressions/cli/* \
			>>"$log" 2>&1; then
		echo "ok   - $arch: the option parser's fuzz inputs under qemu-user ($(sed -n -E 's/^replay: ([0-9]+) passed.*/\1/p' "$log") inputs)"
		passed=$((passed + 1))
	else
		tail -n 20 "$log"
		echo "FAIL - $arch: the option parser's fuzz inputs under qemu-user"
		failed=$((failed + 1))
	fi
	rm -rf "$seeds"
done
echo "cross: $passed passed, $failed failed"
[ "$failed" = 0 ]
