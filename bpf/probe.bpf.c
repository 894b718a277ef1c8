// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probes of what the running kernel's BPF offers, for what a helper's mere presence does not
 * tell (libbpf_probe_bpf_helper() answers that), and the clock's calibration. Run with
 * BPF_PROG_TEST_RUN by loader/kernel.c before the datapath is loaded, and by loader/clock.c
 * (the daemon keeps it to check the clock at each scan); never attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FP_AF_INET 2

#ifndef BPF_FIB_LOOKUP_MARK
#define BPF_FIB_LOOKUP_MARK (1U << 5)
#endif

/*
 * Whether bpf_fib_lookup() takes BPF_FIB_LOOKUP_MARK (Linux 6.10): a kernel that does not
 * know a flag refuses the lookup with -EINVAL before it looks at anything else. Returns the
 * lookup's answer, which the loader compares with -EINVAL: the comparison is not made here,
 * since 32-bit MIPS's JIT (5.16 on) compiles a 64-bit comparison with a negative constant
 * wrongly (it adds a register where it means 1), and this one then came out true. The
 * lookup itself (from the loopback device, ifindex 1 in every namespace, to 0.0.0.0) finds
 * nothing, which is an answer too.
 */
SEC("xdp")
int fp_probe_fib_mark(struct xdp_md *ctx)
{
	struct bpf_fib_lookup fib = {.family = FP_AF_INET, .ifindex = 1};

	return (__u32)bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_MARK);
}

/*
 * The datapath's clock (loader/clock.c): jiffies_64 and CLOCK_MONOTONIC, read together.
 * A tc program: the test run of an XDP program costs an RCU grace period on some kernels.
 */
__u64 fp_probe_jiffies;
__u64 fp_probe_ns;

SEC("tc")
int fp_probe_clock(struct __sk_buff *skb)
{
	/* jiffies first: the time read after them is never before their tick came. */
	fp_probe_jiffies = bpf_jiffies64();
	fp_probe_ns = bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
