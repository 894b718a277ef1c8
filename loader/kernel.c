// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel features: probed once per process, before the datapath is loaded. The datapath
 * gets them as a constant in its read-only data, so the verifier of a kernel that lacks one
 * never sees the code that would use it (see fp_kernel in bpf/xdp_fastpath.bpf.c).
 */
#include <errno.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "clock.h"
#include "common.h"
#include "kernel.h"
#include "probe.skel.h"
#include "xdp_features.h"

const struct fp_kernel_feature fp_kernel_features[] = {
	{FP_KERNEL_JIFFIES, "jiffies_clock", "5.5", "bpf_jiffies64()",
	 "the datapath reads bpf_ktime_get_ns(), about 15 ns more per packet"},
	{FP_KERNEL_FIB_MARK, "fib_mark", "6.10", "BPF_FIB_LOOKUP_MARK",
	 "connections with a conntrack mark stay in the kernel (pass_no_fib_mark)"},
	{FP_KERNEL_XDP_FEATURES, "xdp_features", "6.3", "netdev netlink XDP features",
	 "whether a port can take redirected XDP frames is asked of a veth's peer (an XDP "
	 "program, or GRO from 5.13), not of other devices"},
	{FP_KERNEL_FIB_MTU, "fib_mtu", "5.12", "the MTU in bpf_fib_lookup()'s answer",
	 "the route MTU is found by bisection, 16 lookups per flow and next-hop change"},
	{FP_KERNEL_JIT_ATOMICS, "jit_atomics", NULL,
	 "64-bit atomic adds in the BPF JIT (32-bit ARM has none, or the JIT is off)",
	 "per-flow packet and byte counters are plain adds, which miss a packet if two CPUs "
	 "forward one direction of a flow at the same instant"},
};
const int fp_nr_kernel_features = sizeof(fp_kernel_features) / sizeof(fp_kernel_features[0]);

/* Runs the probe program once on a minimal frame: its return value is the lookup's. */
static bool probe_fib_mark(void)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	uint8_t frame[ETH_HLEN + 20] = {0};
	struct probe *skel = probe__open_and_load();
	bool have = false;

	if (!skel)
		return false;
	run.data_in = frame;
	run.data_size_in = sizeof(frame);
	if (!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.fp_probe_fib_mark), &run))
		have = run.retval != (uint32_t)-EINVAL;
	probe__destroy(skel);
	return have;
}

/* 32-bit ARM and MIPS kernels leave the JIT off unless told (no ARCH_WANT_DEFAULT_BPF_JIT),
 * and a program loaded then stays in the interpreter. (Whether it is off now cannot be read in
 * another network namespace than the first, where the tests run: its sysctl is not there.) */
const char fp_interpreter_note[] =
	"the datapath runs in the interpreter, several times slower: the BPF JIT was off when it "
	"was loaded, or could not compile it (sysctl -w net.core.bpf_jit_enable=1, then detach "
	"and attach again)";

bool fp_prog_jited(int prog_fd)
{
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info);

	return !bpf_obj_get_info_by_fd(prog_fd, &info, &info_len) && info.jited_prog_len > 0;
}

/*
 * Whether the JIT compiles a 64-bit atomic add. 32-bit ARM's does not: a program with one
 * runs in the interpreter there, several times slower, and the interpreter's 64-bit
 * atomics have crashed 32-bit ARM kernels. A program of five instructions, loaded and
 * asked whether it was JIT-compiled.
 */
static bool probe_jit_atomics(void)
{
	const struct bpf_insn insns[] = {
		/* *(u64 *)(r10 - 8) = 0; r1 = 1; lock *(u64 *)(r10 - 8) += r1; return XDP_PASS */
		{.code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1},
		{.code = BPF_STX | BPF_ATOMIC | BPF_DW,
		 .dst_reg = BPF_REG_10,
		 .src_reg = BPF_REG_1,
		 .off = -8,
		 .imm = BPF_ADD},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	bool jited;
	int fd;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "fp_probe_atomic", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	if (fd < 0) /* a JIT that must compile everything and cannot */
		return false;
	jited = fp_prog_jited(fd);
	close(fd);
	return jited;
}

static bool probe_xdp_features(void)
{
	uint64_t features;

	/* Any device answers; loopback is ifindex 1 in every namespace. */
	return fp_xdp_features(1, &features) != -EOPNOTSUPP;
}

static struct fp_clock clock;

struct fp_clock fp_kernel_clock(void)
{
	fp_kernel_probe();
	return clock;
}

uint32_t fp_kernel_probe(void)
{
	static uint32_t have;
	static bool probed;

	if (probed)
		return have;
	/* A calibration that fails (a busy CPU) leaves the clock without a tick, which the
	 * datapath then reads as bpf_ktime_get_ns(): the daemon calibrates it later. */
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_jiffies64, NULL) == 1) {
		int err = fp_clock_calibrate(&clock);

		if (err)
			fp_log(LOG_WARNING,
			       "cannot calibrate the jiffies clock: %s; the daemon tries again",
			       fp_clock_strerror(err));
		have |= FP_KERNEL_JIFFIES;
	}
	/* bpf_check_mtu() came with the lookup's MTU answer (Linux 5.12, one series). */
	if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, BPF_FUNC_check_mtu, NULL) == 1)
		have |= FP_KERNEL_FIB_MTU;
	if (probe_jit_atomics())
		have |= FP_KERNEL_JIT_ATOMICS;
	if (probe_fib_mark())
		have |= FP_KERNEL_FIB_MARK;
	if (probe_xdp_features())
		have |= FP_KERNEL_XDP_FEATURES;
	probed = true;
	return have;
}
