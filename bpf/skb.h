/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the tc entry point knows of an skb that an XDP frame does not have: a VLAN tag the
 * kernel took out of the frame, a checksum the egress is to finish, and segments that GRO
 * merged into one aggregate for the egress to cut again (GSO, or the NIC's TSO).
 */
#ifndef FP_SKB_H
#define FP_SKB_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "xdp_fastpath.h"
#include "parse.h"
#include "nat.h"

/* Ethernet, a tag, PPPoE, IPv6 and the longest TCP header: made readable in place. */
#define FP_SKB_HEADERS (ETH_HLEN + 4 + 8 + 40 + 60)

/*
 * The kernel has moved an outer tag into the skb (skb_vlan_untag) before the tc hook runs,
 * so a tag still in the frame is an inner one (QinQ), which passes like any stacked tag.
 */
static __always_inline enum fp_stat fp_skb_vlan(const struct __sk_buff *skb, struct fp_pkt *pkt)
{
	__u16 vid = skb->vlan_tci & FP_VLAN_VID;

	if (pkt->vlan_id)
		return FP_STAT_PASS_VLAN;
	if (!skb->vlan_present)
		return FP_CONTINUE;
	if (skb->vlan_proto != bpf_htons(ETH_P_8021Q) || !vid)
		return FP_STAT_PASS_VLAN;
	pkt->vlan_id = vid;
	return FP_CONTINUE;
}

/*
 * The IP packet's length on the wire, for the MTU check: of each segment for an aggregate,
 * as the kernel judges it (skb_gso_validate_network_len), else all of what follows the
 * Ethernet header, padding included, as for an XDP frame.
 */
static __always_inline __u32 fp_skb_wire_len(const struct __sk_buff *skb, const struct fp_pkt *pkt)
{
	if (skb->gso_size)
		return pkt->l3l4_hlen + skb->gso_size;
	return skb->len - pkt->l2_len;
}

/*
 * The segments an aggregate leaves as; 1 for a plain packet. The quotient by shifts and
 * subtractions: 32-bit ARM's JIT compiles no division before Linux 6.7 (clang without
 * alu32 makes this one 64-bit), and what it cannot compile runs in the interpreter.
 * l3_len comes from a 16-bit length field, so the quotient is below 2^17.
 */
static __always_inline __u32 fp_skb_segs(const struct __sk_buff *skb, const struct fp_pkt *pkt)
{
	__u32 payload = pkt->l3_len - pkt->l3l4_hlen, mss = skb->gso_size;
	__u32 rest, segs = 0;

	if (!mss || payload <= mss)
		return 1;
	rest = payload + mss - 1;
	/* Without branches, which would give the verifier 2^17 paths to walk: @fits is all
	 * ones where mss << bit still fits in what is left, else 0. */
#pragma unroll
	for (int bit = 16; bit >= 0; bit--) {
		__s64 left = (__s64)(rest >> bit) - (__s64)mss;
		__u64 fits;

		barrier_var(left); /* or clang turns the masks back into branches */
		fits = ~(__u64)(left >> 63);
		rest -= (mss << bit) & fits;
		segs |= (1u << bit) & fits;
	}
	return segs;
}

/*
 * The L4 checksum by the kernel's own helpers, as its NAT updates it: the skb says what the
 * field holds. Complete: every delta goes in. CHECKSUM_PARTIAL (GRO aggregates, a veth
 * peer's checksum offload): the field holds the pseudo-header's sum for the egress to
 * finish, so only the addresses' delta goes in. @off is the field's offset in the frame.
 *
 * A CHECKSUM_COMPLETE skb also carries the sum of its bytes, which must follow them. The
 * helper moves it by the pseudo-header's delta, right for IPv4, whose header checksum makes
 * up for the addresses; IPv6 has none, so its sum moves by the hop limit instead (the
 * helper's BPF_F_IPV6, Linux 6.16, is what this does on every kernel).
 */
static __always_inline void fp_skb_l4csum_apply(struct __sk_buff *skb, const struct fp_pkt *pkt,
						__u32 off, const struct fp_l4_delta *l4)
{
	__u64 udp = pkt->proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;

	if (l4->pseudo)
		bpf_l4_csum_replace(skb, off, 0, l4->pseudo, BPF_F_PSEUDO_HDR | udp);
	if (l4->ports)
		bpf_l4_csum_replace(skb, off, 0, l4->ports, udp);
	if (pkt->ipv6)
		bpf_csum_update(skb, l4->pseudo + l4->hop_limit); /* a no-op unless COMPLETE */
}

/* The egress tag goes into the skb, as the kernel's VLAN device puts it, for the NIC or
 * the stack to insert. False if the kernel failed, which cannot happen for a tag in the
 * skb. */
static __always_inline bool fp_skb_vlan_write(struct __sk_buff *skb,
					      const struct fp_flow_meta *meta)
{
	if (skb->vlan_present && bpf_skb_vlan_pop(skb))
		return false;
	if ((meta->flags & FP_ENCAP_VLAN) &&
	    bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), bpf_ntohs(meta->vlan_tci)))
		return false;
	return true;
}

#endif /* FP_SKB_H */
