#!/bin/bash
# The BPF JIT off, as 32-bit ARM and MIPS kernels (ipq40xx, mvebu, ath79, ramips routers)
# leave it unless told: the datapath runs in the interpreter. It must still carry
# connections, byte-exact, without the 64-bit atomics the interpreter has crashed 32-bit ARM
# kernels with; attach and status say it is in the interpreter and how to leave it; loaded
# again with the JIT on, it is compiled. Needs a kernel that lets the JIT be turned off (not
# this project's own machine's, whose JIT is always on): the kernel matrix runs it in the
# 32-bit ARM and MIPS guests.
. "$(dirname "$0")/testbed.sh"
tb_setup
jit=/proc/sys/net/core/bpf_jit_enable
jit0=$(cat "$jit")
echo 0 >"$jit" 2>/dev/null || tb_skip "this kernel's BPF JIT is always on"
TB_UNDO+=("echo $jit0 >$jit")

fastpath attach r0 r1 --log-file "$TB_TMP/daemon.log" >"$TB_TMP/attach.out" 2>&1 ||
	{ cat "$TB_TMP/attach.out" >&2; exit 1; }
note='runs in the interpreter.*JIT was off.*bpf_jit_enable=1, then detach and attach again'
check "attach says the datapath runs in the interpreter, and how to leave it" \
	grep -q "$note" "$TB_TMP/attach.out"
check "status --json says it is not JIT-compiled" eq "$(tb_status | jq .kernel.jited)" false
check "... and status says so" eval 'fastpath status | grep -q "$note"'
# The probe found no JIT atomics: the counters are plain adds, which the interpreter runs.
check "... and counts flows without atomics (jit_atomics false)" \
	eq "$(tb_status | jq .kernel.jit_atomics)" false

file=$(tb_random_file 2)
want=$(sha256sum <"$file" | cut -d' ' -f1)
tb_share_start
check "download in the interpreter arrives intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "upload in the interpreter arrives intact" eq "$(tb_tcp_transfer "$file" up)" "$want"
check "the fastpath carried >= 90% of the packets" tb_share_at_least 90
tb_udp_server 6000
check "UDP in the interpreter echoes intact" cli "$FP_UDP" client 198.19.2.2 6000 2000
check "no packet was dropped as invalid" eq "$(tb_invalid_dropped)" 0

echo 1 >"$jit"
check "with the JIT on again, status still says so until attached again" \
	eval 'fastpath status | grep -q "$note"'
tb_reattach jit || exit 1
check "attached again: no such note" eval '! grep -q interpreter "$TB_TMP/jit.out"'
check "... and status --json says the program is JIT-compiled" \
	eq "$(tb_status | jq .kernel.jited)" true
# Compiled, a guest downloads 2 MB in a quarter of a second, and the kernel forwards
# what comes before the flow entry goes live: the grace period that makes it live (12 to
# 40 ms in an emulated guest, slottable.c) was up to 16% of it. 8 MB keeps that below 5%.
file=$(tb_random_file 8)
want=$(sha256sum <"$file" | cut -d' ' -f1)
tb_share_start
check "download with the JIT arrives intact" eq "$(tb_tcp_transfer "$file" down)" "$want"
check "the fastpath carried >= 90% of the packets" tb_share_at_least 90
tb_done
