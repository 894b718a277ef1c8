// SPDX-License-Identifier: GPL-2.0-only
/*
 * Probes of what the running kernel's BPF offers, for what a helper's mere presence does not
 * tell (libbpf_probe_bpf_helper() answers that). Loaded and run once by loader/kernel.c
 * with BPF_PROG_TEST_RUN before the datapath is loaded; never attached.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define FP_AF_INET 2
#define FP_EINVAL  22

#ifndef BPF_FIB_LOOKUP_MARK
#define BPF_FIB_LOOKUP_MARK (1U << 5)
#endif

/*
 * Whether bpf_fib_lookup() takes BPF_FIB_LOOKUP_MARK (Linux 6.10): a kernel that does not
 * know a flag refuses the lookup with -EINVAL before it looks at anything else. Returns 1
 * if it takes it, 0 if not. The lookup itself (from the loopback device, ifindex 1 in every
 * namespace, to 0.0.0.0) finds nothing, which is an answer too.
 */
SEC("xdp")
int fp_probe_fib_mark(struct xdp_md *ctx)
{
	struct bpf_fib_lookup fib = {.family = FP_AF_INET, .ifindex = 1};

	return bpf_fib_lookup(ctx, &fib, sizeof(fib), BPF_FIB_LOOKUP_MARK) != -FP_EINVAL;
}

char LICENSE[] SEC("license") = "GPL";
