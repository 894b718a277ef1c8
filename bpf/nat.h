/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NAT rewrite: addresses, ports, TTL/hop limit and checksums, updated incrementally
 * exactly as the kernel's NAT does. Called only once the packet is certain to be
 * redirected: a packet passed to the kernel is never modified.
 */
#ifndef FP_NAT_H
#define FP_NAT_H

#include "parse.h"
#include "csum.h"

/* The L4 checksum after @delta; keeps the IPv4 "no checksum" zero of UDP (RFC 768). */
static __always_inline void fp_update_l4csum(struct fp_pkt *pkt, __u32 delta)
{
	__u16 check = *pkt->l4csum;

	if (pkt->proto == IPPROTO_UDP) {
		if (check == 0) /* only reachable over IPv4: the parser refuses it over IPv6 */
			return;
		check = csum_apply(check, delta);
		*pkt->l4csum = check ? check : 0xffff;
		return;
	}
	*pkt->l4csum = csum_apply(check, delta);
}

/* The 16-bit word holding TTL and protocol, as the IPv4 header checksum sees it. */
static __always_inline __u16 fp_ttl_word(const struct iphdr *iph)
{
	return *(const __u16 *)&iph->ttl;
}

static __always_inline void fp_rewrite4(struct fp_pkt *pkt, const struct fp_flow4 *flow)
{
	struct iphdr *iph = pkt->l3;
	__u32 l3_delta = 0, l4_delta = 0;
	__u16 old_ttl_word = fp_ttl_word(iph);

	if (flow->meta.flags & FP_FLOW_SNAT) {
		l3_delta = csum_delta32(l3_delta, iph->saddr, flow->nat_saddr);
		l4_delta = csum_delta16(l4_delta, pkt->ports[0], flow->nat_sport);
		iph->saddr = flow->nat_saddr;
		pkt->ports[0] = flow->nat_sport;
	}
	if (flow->meta.flags & FP_FLOW_DNAT) {
		l3_delta = csum_delta32(l3_delta, iph->daddr, flow->nat_daddr);
		l4_delta = csum_delta16(l4_delta, pkt->ports[1], flow->nat_dport);
		iph->daddr = flow->nat_daddr;
		pkt->ports[1] = flow->nat_dport;
	}
	/* The addresses are in the TCP/UDP pseudo-header too. */
	fp_update_l4csum(pkt, l4_delta + l3_delta);

	iph->ttl--;
	l3_delta = csum_delta16(l3_delta, old_ttl_word, fp_ttl_word(iph));
	iph->check = csum_apply(iph->check, l3_delta);
}

static __always_inline __u32 fp_addr6_delta(__u32 delta, const __be32 *old, const __be32 *new)
{
#pragma unroll
	for (int i = 0; i < 4; i++)
		delta = csum_delta32(delta, old[i], new[i]);
	return delta;
}

static __always_inline void fp_rewrite6(struct fp_pkt *pkt, const struct fp_flow6 *flow)
{
	struct ipv6hdr *ip6h = pkt->l3;
	__u32 l4_delta = 0;

	if (flow->meta.flags & FP_FLOW_SNAT) {
		l4_delta = fp_addr6_delta(l4_delta, ip6h->saddr.in6_u.u6_addr32, flow->nat_saddr);
		l4_delta = csum_delta16(l4_delta, pkt->ports[0], flow->nat_sport);
		__builtin_memcpy(&ip6h->saddr, flow->nat_saddr, sizeof(ip6h->saddr));
		pkt->ports[0] = flow->nat_sport;
	}
	if (flow->meta.flags & FP_FLOW_DNAT) {
		l4_delta = fp_addr6_delta(l4_delta, ip6h->daddr.in6_u.u6_addr32, flow->nat_daddr);
		l4_delta = csum_delta16(l4_delta, pkt->ports[1], flow->nat_dport);
		__builtin_memcpy(&ip6h->daddr, flow->nat_daddr, sizeof(ip6h->daddr));
		pkt->ports[1] = flow->nat_dport;
	}
	if (l4_delta)
		fp_update_l4csum(pkt, l4_delta);
	ip6h->hop_limit--; /* IPv6 has no header checksum */
}

#endif /* FP_NAT_H */
