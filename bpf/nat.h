/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The NAT rewrite: addresses, ports, TTL/hop limit and checksums, updated incrementally
 * exactly as the kernel's NAT does. Called only once the packet is certain to be
 * redirected: a packet passed to the kernel is never modified.
 *
 * The IPv4 header checksum is always complete and is updated here. What the L4 checksum
 * must take is returned as deltas, for the entry point to apply: an XDP frame's checksum
 * field is complete (fp_l4csum_apply; the frames of a port that may hand over partial
 * ones pass, fp_l4csum_partial), while an skb's may hold only the pseudo-header sum for
 * the egress to finish (CHECKSUM_PARTIAL, as after GRO), which the kernel's checksum
 * helpers know and the tc entry point leaves to them.
 */
#ifndef FP_NAT_H
#define FP_NAT_H

#include "parse.h"
#include "csum.h"

/* One's-complement deltas of what a rewrite changed under the L4 checksum. */
struct fp_l4_delta {
	__u32 pseudo;	 /* addresses: in the pseudo-header, and so in a partial checksum */
	__u32 ports;	 /* only in the complete checksum */
	__u32 hop_limit; /* IPv6: the word holding the hop limit, under no checksum field */
};

/* The complete L4 checksum after @delta; keeps the IPv4 "no checksum" zero of UDP
 * (RFC 768). */
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

/*
 * The 16-bit word holding TTL and protocol, as the IPv4 header checksum sees it. The TTL is
 * its first byte and at least 2 here (fp_decide passes less), so the word with the TTL one
 * less is a subtraction without borrow. It is computed, not read back after a byte store:
 * a 16-bit load cannot be forwarded from a narrower store in flight and waits for it.
 */
static __always_inline __u16 *fp_ttl_word(struct iphdr *iph)
{
	return (__u16 *)&iph->ttl;
}

static __always_inline void fp_rewrite4(struct fp_pkt *pkt, const struct fp_flow4 *flow,
					struct fp_l4_delta *l4)
{
	struct iphdr *iph = pkt->l3;
	__u32 l3_delta = 0, l4_delta = 0;
	__u16 old_ttl_word = *fp_ttl_word(iph);
	__u16 new_ttl_word = old_ttl_word - bpf_htons(0x0100);

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
	l4->pseudo = l3_delta;
	l4->ports = l4_delta;
	l4->hop_limit = 0;

	*fp_ttl_word(iph) = new_ttl_word;
	l3_delta = csum_delta16(l3_delta, old_ttl_word, new_ttl_word);
	iph->check = csum_apply(iph->check, l3_delta);
}

static __always_inline __u32 fp_addr6_delta(__u32 delta, const __be32 *old, const __be32 *new)
{
#pragma unroll
	for (int i = 0; i < 4; i++)
		delta = csum_delta32(delta, old[i], new[i]);
	return delta;
}

/* The 16-bit word holding next header and hop limit: the hop limit (at least 2 here) is
 * its second byte, one less as for the TTL. */
static __always_inline __u16 *fp_hop_word(struct ipv6hdr *ip6h)
{
	return (__u16 *)&ip6h->nexthdr;
}

/* @nat: the flow's translation (fp_nat6), with FP_FLOW_SNAT or FP_FLOW_DNAT in @flags. */
static __always_inline void fp_rewrite6(struct fp_pkt *pkt, __u8 flags, const struct fp_nat6 *nat,
					struct fp_l4_delta *l4)
{
	struct ipv6hdr *ip6h = pkt->l3;
	__u16 old_hop_word = *fp_hop_word(ip6h);
	__u16 new_hop_word = old_hop_word - bpf_htons(0x0001);

	l4->pseudo = 0;
	l4->ports = 0;
	if ((flags & FP_FLOW_SNAT) && nat) {
		l4->pseudo =
			fp_addr6_delta(l4->pseudo, ip6h->saddr.in6_u.u6_addr32, nat->nat_saddr);
		l4->ports = csum_delta16(l4->ports, pkt->ports[0], nat->nat_sport);
		__builtin_memcpy(&ip6h->saddr, nat->nat_saddr, sizeof(ip6h->saddr));
		pkt->ports[0] = nat->nat_sport;
	}
	if ((flags & FP_FLOW_DNAT) && nat) {
		l4->pseudo =
			fp_addr6_delta(l4->pseudo, ip6h->daddr.in6_u.u6_addr32, nat->nat_daddr);
		l4->ports = csum_delta16(l4->ports, pkt->ports[1], nat->nat_dport);
		__builtin_memcpy(&ip6h->daddr, nat->nat_daddr, sizeof(ip6h->daddr));
		pkt->ports[1] = nat->nat_dport;
	}
	*fp_hop_word(ip6h) = new_hop_word; /* IPv6 has no header checksum */
	l4->hop_limit = csum_delta16(0, old_hop_word, new_hop_word);
}

/*
 * Whether the L4 checksum field holds only the pseudo-header's sum, as that of a
 * CHECKSUM_PARTIAL skb does for the egress to finish: the kernel writes it so
 * (__tcp_v4_send_check, udp4_hwcsum, tcp_gro_complete), and a virtio guest must (the
 * virtio spec: its device adds the rest to it). No program can read an skb's ip_summed,
 * nor an XDP frame's virtio header, but the field tells: a complete checksum has this value
 * about once in 65536 packets, and then is only taken for partial. Summed by words as they
 * sit in the packet (csum.h).
 */
static __always_inline bool fp_l4csum_partial(const struct fp_pkt *pkt)
{
	__u64 sum = 0;
	__u32 l4_len;

	if (pkt->ipv6) {
		const __u32 *addrs = ((const struct ipv6hdr *)pkt->l3)->saddr.in6_u.u6_addr32;

#pragma unroll
		for (int i = 0; i < 8; i++) /* the source address and the destination after it */
			sum += addrs[i];
		l4_len = pkt->l3_len - sizeof(struct ipv6hdr);
	} else {
		const struct iphdr *iph = pkt->l3;

		sum = (__u64)iph->saddr + iph->daddr;
		l4_len = pkt->l3_len - sizeof(*iph); /* the parser allows no options */
	}
	sum += bpf_htons(pkt->proto) + bpf_htons(l4_len);
	return *pkt->l4csum == csum_fold(csum_fold64(sum));
}

/* An XDP frame's checksum is complete: the deltas go into the field as they are. IPv4's
 * is updated even when unchanged, IPv6's only when something changed: as the kernel's. */
static __always_inline void fp_l4csum_apply(struct fp_pkt *pkt, const struct fp_l4_delta *l4)
{
	if (!pkt->ipv6 || l4->pseudo + l4->ports)
		fp_update_l4csum(pkt, l4->pseudo + l4->ports);
}

#endif /* FP_NAT_H */
