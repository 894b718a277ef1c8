#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The tests on the kernels routers and distributions ship, each booted in a qemu guest
# (tests/vm/run.sh): fp-test on every kernel of VM_KERNELS, and end-to-end tests (the plan
# below) on those of VM_E2E_KERNELS; fp-test and part of the end-to-end core, cross-built,
# on a big-endian s390x guest for each of VM_BE_KERNELS (ath79's MIPS routers are
# big-endian), on a 32-bit ARM guest for each of VM_ARM32_KERNELS and on a 32-bit MIPS one
# for each of VM_MIPS32_KERNELS. Ends with "N passed, N failed" over all of them.
#
#   VM_KERNELS      default "5.10 5.15 6.1 6.12"
#   VM_BE_KERNELS   default "6.1"; "" skips the big-endian guest
#   VM_BE_FUZZ_ITERATIONS  default 20000: the randomized test's frames there (fp-test's
#                   FP_FUZZ_ITERATIONS, which wins if set). That guest has no JIT for
#                   BPF: 100000 frames, the default elsewhere, took it five minutes
#   VM_BE_E2E_TESTS the end-to-end tests there (default: TCP through masquerade, IPv6;
#                   the whole core passes, in 11 minutes)
#   VM_ARM32_KERNELS default "6.1": fp-test and VM_ARM32_E2E_TESTS (default: TCP through
#                   masquerade, and the datapath in the interpreter, with the JIT off as
#                   such kernels have it unless told), cross-built, on a 32-bit ARM guest
#                   (ARMv7, as ipq40xx and mvebu routers) with its JIT on; "" skips it
#   VM_MIPS32_KERNELS default "6.1": fp-test and VM_MIPS32_E2E_TESTS (default: those of
#                   the big-endian guest and the interpreter's; the whole core passes, in
#                   5 minutes; one vCPU, beside another guest) on a 32-bit
#                   little-endian MIPS guest (a 74Kf core on qemu's Malta board, as ramips
#                   and ath79 routers have; Debian has no big-endian MIPS after 10), JIT
#                   on; "" skips it
#   VM_E2E_KERNELS  default "5.10 5.15 6.1 6.12"; "" skips the end-to-end tests
#   VM_E2E_TESTS    the end-to-end tests to run on each of them (default: the plan below)
#   VM_E2E_TC_TESTS those to run there again at the tc hook (default: the plan below)
#   VM_SERIAL_KERNELS  default ""; there the tests of VM_SERIAL_TESTS run apart, in a guest
#                   whose vCPUs take turns (VM_ACCEL=tcg,thread=single), with their waits
#                   stretched (E2E_TIME_SCALE=3)
#   VM_SERIAL_TESTS default: those that attach or detach an XDP program while XDP traffic
#                   flows (test_bridge, test_egress_unable)
#   VM_SINGLE_KERNELS default "5.15 6.12": every guest there runs with the vCPUs in turn,
#                   the end-to-end tests' waits stretched (E2E_TIME_SCALE=3). 6.12's guest
#                   once oopsed while booting, an int3 left by the kernel's patching of its
#                   own code (an emulation fault). Such a guest keeps one host core busy, so
#                   its tc hook's guest runs beside its XDP one (see two_at_a_time below):
#                   5.15, whose two plans are of a size, is here for that
#
# With qemu's multi-threaded TCG, the kernel's rewrite of its XDP dispatcher while another
# vCPU runs it locks 5.10 up and oopses 6.12 (tests/vm/xdp-swap-lockup.sh does it without
# xdp-fastpath; docs/testing.md). tests/vm/run.sh fills the dispatcher before the tests, so
# that it is never rewritten; the serial guests are what came before, twice as slow, kept
# for a kernel where that is not enough.
set -u
cd "$(dirname "$0")/../.." || exit 2

kernels=${VM_KERNELS-5.10 5.15 6.1 6.12}
be_kernels=${VM_BE_KERNELS-6.1}
be_e2e_tests=${VM_BE_E2E_TESTS-test_tcp_nat.sh test_ipv6.sh}
arm32_kernels=${VM_ARM32_KERNELS-6.1}
arm32_e2e_tests=${VM_ARM32_E2E_TESTS-test_tcp_nat.sh test_interpreter.sh}
mips32_kernels=${VM_MIPS32_KERNELS-6.1}
mips32_e2e_tests=${VM_MIPS32_E2E_TESTS-test_tcp_nat.sh test_ipv6.sh test_interpreter.sh}
export E2E_EMULATED=1 # see tb_share_at_least in tests/e2e/testbed.sh
e2e_kernels=${VM_E2E_KERNELS-5.10 5.15 6.1 6.12}
# The plan: every end-to-end test that depends on the kernel runs on one of the old kernels
# at least, and the core (tests/e2e/core.list) on the oldest and the newest, within CI's 90
# minutes (a test takes 25 to 240 s in a guest; on 2026-12-07 a slower machine image made
# the plan before this one, the core on all four kernels, take 73 minutes of guests alone).
# What the middle kernels change is in fp-test, which runs on all four, and in the tests
# of what they add. 5.10, the oldest: the core at XDP, the veth checks (before 5.13 a veth
# takes redirects only with a program of its own; before 6.3 attach asks the peer instead
# of the kernel), a port without XDP beside a native one (before 6.3 the daemon guesses
# what the kernel cannot say), generic mode (before 5.15 no program with --steer's
# cpumap); at the tc hook (clsact), NAT for TCP, IPv6 and a VLAN. 5.15, OpenWrt 23.05's
# (Ubuntu 22.04's build of it): NAT for TCP at both hooks, the hand-back at FIN, a PPPoE
# WAN and an nft flowtable beside the fastpath at XDP, and at the tc hook, where auto
# attaches most router ports, UDP and DNAT (which no other kernel runs at clsact) and
# DSA's VLAN layouts (a LAN on a VLAN, a VLAN-filtering bridge). 6.1: what this machine's
# kernel may not build: a LAN on a VLAN and a bridge over a VLAN port, PPPoE over a VLAN,
# an IPsec tunnel with ESP, WireGuard, IPIP and GRE devices, a bond; the tc hook's own
# test; policy routing without BPF_FIB_LOOKUP_MARK (6.10), as every router kernel does it.
# 6.12, the newest that routers and distributions ship: the core at both hooks (the tc
# hook is tcx there, from 6.6, and clsact on the others) but for a killed daemon (4
# minutes there; 5.10 and this machine run it), and a bond (whose XDP features 6.1 cannot
# read). fp-test runs the tc program's cases on every kernel.
core=$(grep -v '^#' tests/e2e/core.list | tr '\n' ' ')
core_but_faults=${core/test_daemon_faults.sh /}
plan() { # KERNEL xdp|tc: the end-to-end tests for it
	case "$1 $2" in
	"5.10 xdp")
		echo "$core test_egress_unable.sh test_egress_no_xdp.sh test_peer_checksum.sh" \
			"test_generic_mode.sh"
		;;
	"5.10 tc") echo "test_tcp_nat.sh test_ipv6.sh test_vlan.sh" ;;
	"5.15 xdp") echo "test_tcp_nat.sh test_tcp_close.sh test_pppoe.sh test_flowtable.sh" ;;
	"5.15 tc")
		echo "test_tcp_nat.sh test_udp.sh test_dnat.sh test_vlan.sh test_bridge_vlan.sh"
		;;
	"6.1 xdp")
		echo "test_vlan.sh test_bridge_vlan.sh test_pppoe_vlan.sh test_tc_hook.sh" \
			"test_ipsec.sh test_l3_tunnel.sh test_policy_routing.sh test_bond.sh"
		;;
	"6.1 tc") echo "" ;;
	"6.12 xdp") echo "$core_but_faults test_bond.sh" ;;
	"6.12 tc") echo "$core_but_faults" ;;
	*) echo "$core" ;;
	esac
}
serial_kernels=${VM_SERIAL_KERNELS-}
serial_tests=${VM_SERIAL_TESTS-test_bridge.sh test_egress_unable.sh}
single_kernels=${VM_SINGLE_KERNELS-5.15 6.12}
passed=0
failed=0
froze=0
log=$(mktemp)

console=$(mktemp)
export VM_LOG=$console # the guest's whole console, kernel messages included
declare -A pair_out=() # the jobs two_at_a_time runs: their pids and output files
trap 'rm -f "$log" "$console"; abandon_pair' EXIT

# A guest that hung (a lockup, a device that never goes away) says why in the kernel's
# messages, which the lines the matrix prints leave out.
show_console() {
	echo "    the tests' last marks in its kernel log (start, cleanup, end):"
	grep -a '] e2e: ' "$console" | tail -n 6 | sed 's/^/    | /'
	local beat
	beat=$(grep -a '^fp-vm-heartbeat ' "$console" | tail -n 1)
	echo "    its last heartbeat: ${beat:-none}"
	echo "    the guest's last console lines:"
	grep -av '^fp-vm-heartbeat ' "$console" | tail -n 60 | sed 's/^/    | /'
}
count() { # SUITE: adds the suite's "N passed, N failed" line, or a failure if it has none
	local line
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL - $1: no result (see above)"
		show_console
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + $(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")))
	failed=$((failed + $(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")))
}

# The tests of LIST that are (in) or are not (out) among SET, on one line.
pick() { # in|out LIST SET
	local t out=()
	for t in $2; do
		if [[ " $3 " == *" $t "* ]]; then
			[ "$1" = in ] && out+=("$t")
		else
			[ "$1" = out ] && out+=("$t")
		fi
	done
	echo "${out[*]}"
}
# tests/vm/run.sh KERNEL COMMAND..., its output in $log and here (less the lines that
# match SKIP); fails if the guest froze, its console silent (once in CI, the 32-bit MIPS
# one: no line in 30 minutes, no watchdog's, no mark of the test's own timeout), after a
# WARN line and what the guest showed. The callers run what it had not done in a new guest;
# a second freeze is a failure.
guest() { # SKIP KERNEL COMMAND...
	local skip=$1
	shift
	tests/vm/run.sh "$@" 2>&1 | tee "$log" | grep --line-buffered -vE "$skip"
	grep -q '^tests/vm/run.sh: the .* guest went silent' "$log" || return 0
	echo "WARN - the guest froze; what it had not done runs in a new guest"
	show_console
	froze=$((froze + 1))
	return 1
}
e2e_guest() { # KERNEL WHAT TESTS...: one guest runs them (E2E_*, VM_ARCH, VM_ACCEL pass on)
	local k=$1 what=$2 ended
	shift 2
	[ $# -gt 0 ] || return 0
	echo "== $what on Linux $k (qemu)"
	local start=$SECONDS
	if ! guest '^\[ ' "$k" tests/e2e/run.sh "$@"; then
		# The tests that ended count; the one it froze in and those after it run again.
		passed=$((passed + $(grep -c '^ok   - e2e ' "$log")))
		failed=$((failed + $(grep -c '^FAIL - e2e ' "$log")))
		ended=$(grep -cE '^(ok|FAIL|skip) +- e2e ' "$log")
		if [ "$ended" -lt $# ]; then
			guest '^\[ ' "$k" tests/e2e/run.sh "${@:ended+1}"
		else
			echo "e2e: 0 passed, 0 failed" >"$log" # it froze once they had all ended
		fi
	fi
	count "$what on $k"
	echo "   (the guest took $((SECONDS - start)) s)"
}
fptest_guest() { # KERNEL NAME FP_TEST: one guest runs it (VM_ARCH, VM_ACCEL pass on)
	echo "== fp-test on Linux $2 (qemu)"
	local start=$SECONDS
	# 57 to 158 s in CI; the end-to-end tests have a timeout of their own, fp-test not.
	VM_TIMEOUT=${VM_TIMEOUT:-600} guest '^ok|^\[ ' "$1" "$3" ||
		VM_TIMEOUT=${VM_TIMEOUT:-600} guest '^ok|^\[ ' "$1" "$3"
	count "fp-test on $2"
	echo "   (the guest took $((SECONDS - start)) s)"
}
# A guest that keeps one host core busy, and no more, runs beside another such guest: this
# machine and CI's have two cores. fp-test is one process, whatever the guest's vCPUs; a
# guest whose vCPUs take turns, or that has one (Malta's), runs on one host thread. The end-
# to-end tests of a guest with two vCPUs that run together keep both cores busy, and run
# alone. two_at_a_time runs its JOBs (command lines, FUNCTION ARGS... with the variables
# they set, e2e_guest or fptest_guest) two at a time, each apart, with logs and counts of
# its own: a job's output shows, whole, when it ends, and its counts add to the run's.
# The guests share nothing (run.sh gives each its own overlay, and fetches and builds what
# they share in turn).
two_at_a_time() { # JOB...
	local job out
	for job in "$@"; do
		[ ${#pair_out[@]} -lt 2 ] || pair_reap
		out=$(mktemp)
		apart eval "$job" >"$out" 2>&1 &
		pair_out[$!]=$out
	done
	while [ ${#pair_out[@]} -gt 0 ]; do
		pair_reap
	done
}
apart() { # FUNCTION ARGS...: runs it with logs and counts of its own, which it prints last
	local log console passed=0 failed=0 froze=0
	log=$(mktemp) console=$(mktemp)
	local -x VM_LOG=$console
	# shellcheck disable=SC2064 # these files, not the caller's $log when the job ends
	trap "rm -f $(printf '%q %q' "$log" "$console")" EXIT
	"$@"
	echo "job-counts: $passed $failed $froze"
}
pair_reap() { # the next job of two_at_a_time to end: shows its output, adds its counts
	local pid out counts
	wait -n -p pid "${!pair_out[@]}"
	out=${pair_out[$pid]}
	unset "pair_out[$pid]"
	grep -v '^job-counts: ' "$out"
	counts=$(sed -n 's/^job-counts: //p' "$out")
	rm -f "$out"
	if [ -z "$counts" ]; then
		echo "FAIL - a guest that ran beside another: no result (see above)"
		failed=$((failed + 1))
		return
	fi
	read -r -a counts <<<"$counts"
	passed=$((passed + counts[0]))
	failed=$((failed + counts[1]))
	froze=$((froze + counts[2]))
}
# On the way out (a failure, ^C, a timeout): the jobs under way stop, and show what they did.
abandon_pair() {
	local pid
	for pid in "${!pair_out[@]}"; do
		kill_tree "$pid"
		wait "$pid"
		echo "(stopped, with this run: a guest that ran beside another)"
		grep -v '^job-counts: ' "${pair_out[$pid]}"
		rm -f "${pair_out[$pid]}"
	done
}
kill_tree() { # PID: it and every process under it (a background job ignores ^C)
	local child
	for child in $(pgrep -P "$1"); do
		kill_tree "$child"
	done
	kill "$1" 2>/dev/null || true
}
# The accelerator of KERNEL's guests: the vCPUs in turn for VM_SINGLE_KERNELS.
guest_accel() { # KERNEL
	if [[ " $single_kernels " == *" $1 "* ]]; then
		echo tcg,thread=single
	else
		echo "${VM_ACCEL:-}"
	fi
}
# The other architectures' guests: their kernels, their names here, their end-to-end tests.
declare -A arch_kernels=([s390x]=$be_kernels [armhf]=$arm32_kernels [mipsel]=$mips32_kernels)
declare -A arch_what=([s390x]="s390x, big-endian" [armhf]="armhf, 32-bit ARM"
	[mipsel]="mipsel, 32-bit MIPS")
declare -A arch_e2e_tests=([s390x]=$be_e2e_tests [armhf]=$arm32_e2e_tests
	[mipsel]=$mips32_e2e_tests)
# Their cross builds, first; an architecture whose build failed (one failure) runs nothing.
cross_built=()
for arch in s390x armhf mipsel; do
	[ -n "${arch_kernels[$arch]}" ] || continue
	echo "== the cross build for $arch"
	if tests/cross/build.sh "$arch" >"$log" 2>&1; then
		cross_built+=("$arch")
	else
		tail -n 20 "$log"
		echo "FAIL - the cross build for $arch"
		failed=$((failed + 1))
	fi
done
queue=() # jobs: command lines, as two_at_a_time takes them
queue_cross() { # ARCH fp-test|e2e: a job for each kernel of ARCH's guests, if it was built
	local arch=$1 k job fuzz=''
	[[ " ${cross_built[*]} " == *" $arch "* ]] || return 0
	# The big-endian guest has no JIT for BPF: fewer random frames there.
	[ "$arch" = s390x ] &&
		fuzz=FP_FUZZ_ITERATIONS=${FP_FUZZ_ITERATIONS:-${VM_BE_FUZZ_ITERATIONS:-20000}}
	for k in ${arch_kernels[$arch]}; do
		if [ "$2" = e2e ]; then
			job="E2E_BUILD=build/$arch VM_ARCH=$arch e2e_guest $k"
			job+=" 'end-to-end tests, ${arch_what[$arch]},' ${arch_e2e_tests[$arch]}"
		else
			job="$fuzz VM_ARCH=$arch fptest_guest $k '$k ${arch_what[$arch]}'"
			job+=" build/$arch/fp-test"
		fi
		queue+=("$job")
	done
}
# One host core each: fp-test on every kernel and architecture, and the end-to-end tests
# of the 32-bit MIPS guest (Malta's one vCPU); the cross-built ones, the slowest, first.
queue_cross mipsel e2e
for arch in armhf s390x mipsel; do
	queue_cross "$arch" fp-test
done
for k in $kernels; do
	queue+=("VM_ACCEL=$(guest_accel "$k") fptest_guest $k $k build/fp-test")
done
two_at_a_time "${queue[@]}"
# Two cores each, in turn: the end-to-end tests of the other architectures' guests.
queue=()
queue_cross s390x e2e
queue_cross armhf e2e
for job in "${queue[@]}"; do
	eval "$job"
done
# The end-to-end tests on each kernel: at XDP, then at the tc hook; with the vCPUs in turn
# (one host core each) the two guests side by side.
for k in $e2e_kernels; do
	serial=''
	[[ " $serial_kernels " == *" $k "* ]] && serial=$serial_tests
	e2e_tests=${VM_E2E_TESTS-$(plan "$k" xdp)}
	tc_tests=${VM_E2E_TC_TESTS-$(plan "$k" tc)}
	accel=$(guest_accel "$k")
	scale=${E2E_TIME_SCALE:-1}
	[ "$accel" = tcg,thread=single ] && scale=3
	at_xdp="VM_ACCEL=$accel E2E_TIME_SCALE=$scale e2e_guest $k 'end-to-end tests'"
	at_xdp+=" $(pick out "$e2e_tests" "$serial")"
	at_tc="VM_ACCEL=$accel E2E_TIME_SCALE=$scale E2E_MODE=tc"
	at_tc+=" e2e_guest $k 'end-to-end tests at the tc hook' $(pick out "$tc_tests" "$serial")"
	if [ "$accel" = tcg,thread=single ]; then
		two_at_a_time "$at_tc" "$at_xdp"
	else
		eval "$at_xdp"
		eval "$at_tc"
	fi
	# shellcheck disable=SC2046 # lists of test names
	{
		VM_ACCEL=tcg,thread=single E2E_TIME_SCALE=3 \
			e2e_guest "$k" "end-to-end tests that swap XDP programs, vCPUs in turn" \
			$(pick in "$e2e_tests" "$serial")
		VM_ACCEL=tcg,thread=single E2E_TIME_SCALE=3 E2E_MODE=tc \
			e2e_guest "$k" "... and at the tc hook" $(pick in "$tc_tests" "$serial")
	}
done
[ "$froze" = 0 ] || echo "guests that froze and ran again: $froze (the WARN lines above)"
echo "kernels: $passed passed, $failed failed"
[ "$failed" = 0 ]
