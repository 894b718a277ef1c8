// SPDX-License-Identifier: GPL-2.0-only
/*
 * Passes every frame. The testbed puts it on the endpoints' veths on kernels before 5.13,
 * where a veth takes frames redirected to it by XDP only if it runs an XDP program itself
 * (later kernels need only GRO).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
