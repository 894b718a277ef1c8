/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The next hop of a flow: egress interface, MAC addresses and MTU from bpf_fib_lookup(),
 * completed below the routed interface by l2.h (bridge port, VLAN tag, PPPoE), cached in
 * the flow entry and tagged with the generation it was resolved in. Userspace
 * bumps fp_config.nh_gen whenever routes, neighbours or links change, which invalidates
 * every cached next hop at once; the next packet of each flow looks it up again.
 *
 * The kernel routes a NATed packet after DNAT (prerouting) and before SNAT (postrouting):
 * the lookup uses the translated destination and the original source.
 */
#ifndef FP_NEXTHOP_H
#define FP_NEXTHOP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "parse.h"
#include "l2.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

static __always_inline void fp_fib_params4(struct bpf_fib_lookup *fib, const struct fp_pkt *pkt,
					   const struct fp_flow4 *flow, __u32 ingress)
{
	const struct iphdr *iph = pkt->l3;
	bool dnat = flow->meta.flags & FP_FLOW_DNAT;

	fib->family = AF_INET;
	fib->tos = iph->tos;
	fib->l4_protocol = pkt->proto;
	fib->sport = pkt->ports[0];
	fib->dport = dnat ? flow->nat_dport : pkt->ports[1];
	fib->ipv4_src = iph->saddr;
	fib->ipv4_dst = dnat ? flow->nat_daddr : iph->daddr;
	fib->ifindex = ingress;
}

/* @nat: the flow's translation, with FP_FLOW_DNAT in @flags. */
static __always_inline void fp_fib_params6(struct bpf_fib_lookup *fib, const struct fp_pkt *pkt,
					   __u8 flags, const struct fp_nat6 *nat, __u32 ingress)
{
	const struct ipv6hdr *ip6h = pkt->l3;
	bool dnat = (flags & FP_FLOW_DNAT) && nat;

	fib->family = AF_INET6;
	/* Traffic class and flow label, as the kernel's IPv6 route lookup takes them. */
	fib->flowinfo = *(const __be32 *)ip6h & bpf_htonl(0x0fffffff);
	fib->l4_protocol = pkt->proto;
	fib->sport = pkt->ports[0];
	fib->dport = dnat ? nat->nat_dport : pkt->ports[1];
	__builtin_memcpy(fib->ipv6_src, &ip6h->saddr, sizeof(fib->ipv6_src));
	if (dnat)
		__builtin_memcpy(fib->ipv6_dst, nat->nat_daddr, sizeof(fib->ipv6_dst));
	else
		__builtin_memcpy(fib->ipv6_dst, &ip6h->daddr, sizeof(fib->ipv6_dst));
	fib->ifindex = ingress;
}

/* Linux 6.10: the lookup takes a fwmark, in the first 4 bytes of the smac field. */
#ifndef BPF_FIB_LOOKUP_MARK
#define BPF_FIB_LOOKUP_MARK (1U << 5)
#endif

/*
 * The route's MTU on a kernel whose lookup does not answer it (before 5.12): the largest
 * tot_len the lookup does not refuse with FRAG_NEEDED, found by bisection, 16 lookups once
 * per flow and next-hop generation. A lookup that succeeds rewrites its parameters (the
 * destination becomes the gateway), so each one starts from @query.
 */
static __always_inline __u16 fp_fib_mtu_bisect(void *ctx, const struct bpf_fib_lookup *query,
					       __u32 flags)
{
	struct bpf_fib_lookup fib;
	__u32 lo = 0, hi = 0xffff;

	for (int i = 0; i < 16; i++) {
		__u32 mid = (lo + hi + 1) / 2;

		__builtin_memcpy(&fib, query, sizeof(fib));
		fib.tot_len = mid;
		if (bpf_fib_lookup(ctx, &fib, sizeof(fib), flags) == BPF_FIB_LKUP_RET_FRAG_NEEDED)
			hi = mid - 1;
		else
			lo = mid;
	}
	return lo;
}

/*
 * Looks the next hop up and caches it in @meta; FP_CONTINUE on success. A flow with a
 * conntrack mark is looked up with it as the fwmark, as the kernel routes its packets
 * when the firewall copies the mark (multi-WAN policy routing). A kernel older than 6.10
 * has no such lookup (@fib_mark false): the flow stays on the kernel path, since a lookup
 * without its mark could pick another WAN. @ctx: either entry point's.
 */
static __always_inline enum fp_stat fp_nexthop_resolve(void *ctx, struct bpf_fib_lookup *fib,
						       struct fp_flow_meta *meta, __u32 gen,
						       __u32 mark, bool fib_mark, bool fib_mtu)
{
	struct bpf_fib_lookup query;
	enum fp_stat reason;
	__u32 flags = 0;

	/*
	 * The MTU check is ours, against the cached MTU, on every packet: the lookup only
	 * answers the route's MTU. A tot_len that fits any route asks for it in both entry
	 * points; with 0, an skb's lookup would answer the device's MTU instead and judge
	 * this skb by it.
	 */
	fib->tot_len = 1;
	if (mark) {
		if (!fib_mark)
			return FP_STAT_PASS_NO_FIB_MARK;
		__builtin_memcpy(fib->smac, &mark, sizeof(mark));
		flags = BPF_FIB_LOOKUP_MARK;
	}
	if (!fib_mtu)
		__builtin_memcpy(&query, fib, sizeof(query));
	switch (bpf_fib_lookup(ctx, fib, sizeof(*fib), flags)) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		if (!fib_mtu)
			fib->mtu_result = fp_fib_mtu_bisect(ctx, &query, flags);
		break;
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return FP_STAT_PASS_NO_NEIGH; /* the kernel resolves it; a later packet retries */
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return FP_STAT_PASS_MTU; /* 5.10 judges an skb by its egress device's MTU */
	default:
		return FP_STAT_PASS_NO_ROUTE;
	}
	reason = fp_l2_egress(fib, meta);
	if (reason != FP_CONTINUE)
		return reason;
	/* Publish the generation last; a concurrent reader sees the old one and looks up too. */
	asm volatile("" ::: "memory");
	meta->nh_gen = gen;
	return FP_CONTINUE;
}

#endif /* FP_NEXTHOP_H */
