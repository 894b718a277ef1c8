/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Packet parsing: Ethernet with an optional 802.1Q tag and PPPoE session, IPv4/IPv6, TCP/UDP.
 *
 * The parser accepts only what the fastpath can forward exactly as the kernel would, and
 * names the reason for everything else. It checks what the kernel's receive path and
 * conntrack check before they accept a packet (ip_rcv_core, ipv6_rcv, tcp_error, udp_error),
 * so the fastpath never forwards a packet the kernel would have dropped as malformed.
 * L4 checksums are not verified (as in nf_flow_table): the rewrite preserves a bad one, so
 * the receiver still drops the packet.
 *
 * Both entry points use it. An XDP frame is all in [data, data_end); an skb at the tc hook
 * may hold only its headers there, the rest of a GRO aggregate in fragments: lengths are
 * judged against the whole frame (@frame_len), reads against data_end.
 */
#ifndef FP_PARSE_H
#define FP_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>

#include "xdp_fastpath.h"
#include "csum.h"

/* Returned by the parser and the checks when the packet may continue down the fastpath. */
#define FP_CONTINUE FP_STAT_MAX

#define FP_IP_MF	 0x2000
#define FP_IP_OFFSET	 0x1fff
#define FP_TCP_FLAGS_OFF 13 /* offset of the flags byte in the TCP header */
#define FP_TCP_FIN	 0x01
#define FP_TCP_SYN	 0x02
#define FP_TCP_RST	 0x04
#define FP_TCP_ACK	 0x10

#ifndef ETH_P_8021AD
#define ETH_P_8021AD 0x88A8
#endif
#ifndef ETH_P_PPP_SES
#define ETH_P_PPP_SES 0x8864
#endif
#define FP_PPP_IPV4 0x0021
#define FP_PPP_IPV6 0x0057
#define FP_VLAN_VID 0x0fff

/* 802.1Q tag after the source MAC; PPPoE session header (RFC 2516) and PPP protocol. */
struct fp_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

struct fp_pppoe_hdr {
	__u8 ver_type; /* 0x11 */
	__u8 code;     /* 0 in a session */
	__be16 sid;
	__be16 length; /* PPP protocol and payload */
	__be16 ppp_proto;
};

struct fp_pkt {
	struct ethhdr *eth;
	void *l3;	  /* struct iphdr or struct ipv6hdr */
	__be16 *ports;	  /* source and destination port: the first 4 bytes of TCP and UDP */
	__sum16 *l4csum;  /* the TCP or UDP checksum field */
	/* The family: a whole 64-bit stack slot, so that the verifier keeps the constant the
	 * parser writes on each path (in a narrower field, the bytes written beside it in
	 * its slot make it unknown), and knows which header each later access is to. */
	__u64 ipv6;
	__u16 l3_len;	  /* total L3 length, host order; the frame may be padded beyond it */
	__u16 l2_len;	  /* Ethernet header, VLAN tag and PPPoE header */
	__be16 l3_proto;  /* ETH_P_IP or ETH_P_IPV6 */
	__u16 vlan_id;	  /* 0: untagged */
	__be16 pppoe_sid; /* 0: not PPPoE */
	__u16 pppoe_len;  /* PPPoE length field: the PPP protocol and the IP packet */
	__u16 l3l4_hlen;  /* IP and TCP/UDP headers: what each segment of an aggregate repeats */
	__u8 proto;
	__u8 ttl; /* TTL or hop limit */
	__u8 tcp_flags;
};

/* The IANA "IPv6 Extension Header Types" (RFC 7045, RFC 8200). */
static __always_inline bool fp_ipv6_is_ext_header(__u8 nexthdr)
{
	switch (nexthdr) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_FRAGMENT:
	case IPPROTO_DSTOPTS:
	case IPPROTO_ESP:
	case IPPROTO_AH:
	case IPPROTO_MH:
	case 139: /* Host Identity Protocol */
	case 140: /* Shim6 */
	case 253: /* experimentation and testing (RFC 3692) */
	case 254:
		return true;
	}
	return false;
}

/*
 * A 16-bit length field of the packet, in host order. The verifier of kernels before 6.x
 * (5.10 to 6.12 at least) forgets a value's range through a byte swap, and then refuses the
 * packet-pointer arithmetic the length takes part in. The mask restores the range; behind
 * barrier_var() the compiler cannot prove it redundant and drop it.
 */
static __always_inline __u32 fp_len16(__be16 field)
{
	__u32 len = bpf_ntohs(field);

	barrier_var(len);
	return len & 0xffff;
}

/* TCP or UDP header at @l4, @l4_len bytes of L3 payload. */
static __always_inline enum fp_stat fp_parse_l4(struct fp_pkt *pkt, void *l4, __u16 l4_len,
						void *data_end)
{
	if (pkt->proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end || l4_len < sizeof(*th))
			return FP_STAT_PASS_MALFORMED;
		if (th->doff < 5 || th->doff * 4 > l4_len)
			return FP_STAT_PASS_MALFORMED;
		pkt->tcp_flags = ((__u8 *)th)[FP_TCP_FLAGS_OFF];
		pkt->l4csum = &th->check;
		pkt->l3l4_hlen += th->doff * 4;
	} else {
		struct udphdr *uh = l4;
		__u32 udp_len;

		if ((void *)(uh + 1) > data_end || l4_len < sizeof(*uh))
			return FP_STAT_PASS_MALFORMED;
		udp_len = fp_len16(uh->len);
		if (udp_len < sizeof(*uh) || udp_len > l4_len)
			return FP_STAT_PASS_MALFORMED;
		/* A zero UDP checksum is "none" over IPv4 but invalid over IPv6 (RFC 8200). */
		if (pkt->ipv6 && uh->check == 0)
			return FP_STAT_PASS_MALFORMED;
		pkt->l4csum = &uh->check;
		pkt->l3l4_hlen += sizeof(*uh);
	}
	pkt->ports = l4;
	return FP_CONTINUE;
}

static __always_inline enum fp_stat fp_parse_ipv4(struct fp_pkt *pkt, void *data_end,
						  __u32 frame_len)
{
	struct iphdr *iph = pkt->l3;
	__u32 tot_len;

	if ((void *)(iph + 1) > data_end)
		return FP_STAT_PASS_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return FP_STAT_PASS_MALFORMED;
	if (iph->ihl > 5)
		return FP_STAT_PASS_IP_OPTIONS;
	tot_len = fp_len16(iph->tot_len);
	if (tot_len < sizeof(*iph) || pkt->l2_len + tot_len > frame_len)
		return FP_STAT_PASS_MALFORMED;
	/* PPPoE: the kernel trims the frame to the session's length before IP sees it. */
	if (pkt->pppoe_sid && tot_len + 2 > pkt->pppoe_len)
		return FP_STAT_PASS_MALFORMED;
	if (!csum_ipv4_header_ok(iph))
		return FP_STAT_PASS_MALFORMED;
	if (iph->frag_off & bpf_htons(FP_IP_MF | FP_IP_OFFSET))
		return FP_STAT_PASS_FRAGMENT;
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return FP_STAT_PASS_PROTO;

	pkt->l3_len = tot_len;
	pkt->l3l4_hlen = sizeof(*iph);
	pkt->proto = iph->protocol;
	pkt->ttl = iph->ttl;
	return fp_parse_l4(pkt, (void *)iph + iph->ihl * 4, tot_len - iph->ihl * 4, data_end);
}

static __always_inline enum fp_stat fp_parse_ipv6(struct fp_pkt *pkt, void *data_end,
						  __u32 frame_len)
{
	struct ipv6hdr *ip6h = pkt->l3;
	__u32 payload_len;

	if ((void *)(ip6h + 1) > data_end)
		return FP_STAT_PASS_MALFORMED;
	if (ip6h->version != 6)
		return FP_STAT_PASS_MALFORMED;
	payload_len = fp_len16(ip6h->payload_len);
	/* Zero is a jumbogram (RFC 2675): left to the kernel like anything unusual. */
	if (payload_len == 0 || pkt->l2_len + sizeof(*ip6h) + payload_len > frame_len)
		return FP_STAT_PASS_MALFORMED;
	if (pkt->pppoe_sid && sizeof(*ip6h) + payload_len + 2 > pkt->pppoe_len)
		return FP_STAT_PASS_MALFORMED;
	if (ip6h->nexthdr == IPPROTO_FRAGMENT)
		return FP_STAT_PASS_FRAGMENT;
	if (fp_ipv6_is_ext_header(ip6h->nexthdr))
		return FP_STAT_PASS_IP_OPTIONS;
	if (ip6h->nexthdr != IPPROTO_TCP && ip6h->nexthdr != IPPROTO_UDP)
		return FP_STAT_PASS_PROTO;

	pkt->l3_len = sizeof(*ip6h) + payload_len;
	pkt->l3l4_hlen = sizeof(*ip6h);
	pkt->proto = ip6h->nexthdr;
	pkt->ttl = ip6h->hop_limit;
	return fp_parse_l4(pkt, ip6h + 1, payload_len, data_end);
}

/*
 * Ethernet, then at most one 802.1Q tag and one PPPoE session header, as a router's WAN
 * (PPPoE, often on a VLAN) and LAN (VLANs) carry them. Stacked tags (QinQ), VLAN id 0
 * (priority tags) and PPPoE control traffic go to the kernel.
 */
static __always_inline enum fp_stat fp_parse_l2(void *data, void *data_end, __u32 frame_len,
						struct fp_pkt *pkt)
{
	struct ethhdr *eth = data;
	__u16 off = sizeof(*eth);
	__be16 proto;

	if ((void *)(eth + 1) > data_end)
		return FP_STAT_PASS_MALFORMED;
	/* Broadcast and multicast are never forwarded flows (group bit of the destination). */
	if (eth->h_dest[0] & 1)
		return FP_STAT_PASS_NOT_UNICAST;
	pkt->eth = eth;
	proto = eth->h_proto;

	if (proto == bpf_htons(ETH_P_8021Q)) {
		struct fp_vlan_hdr *vlan = (void *)(eth + 1);

		if ((void *)(vlan + 1) > data_end)
			return FP_STAT_PASS_MALFORMED;
		pkt->vlan_id = bpf_ntohs(vlan->tci) & FP_VLAN_VID;
		proto = vlan->proto;
		off += sizeof(*vlan);
		if (!pkt->vlan_id || proto == bpf_htons(ETH_P_8021Q) ||
		    proto == bpf_htons(ETH_P_8021AD))
			return FP_STAT_PASS_VLAN;
	} else if (proto == bpf_htons(ETH_P_8021AD)) {
		return FP_STAT_PASS_VLAN;
	}

	if (proto == bpf_htons(ETH_P_PPP_SES)) {
		struct fp_pppoe_hdr *ph = data + off;

		if ((void *)(ph + 1) > data_end)
			return FP_STAT_PASS_MALFORMED;
		if (ph->ver_type != 0x11 || ph->code != 0 || ph->sid == 0)
			return FP_STAT_PASS_PPPOE;
		pkt->pppoe_sid = ph->sid;
		pkt->pppoe_len = bpf_ntohs(ph->length);
		/* The length counts from the PPP protocol field; the frame may be padded. */
		if (off + 6 + pkt->pppoe_len > frame_len)
			return FP_STAT_PASS_MALFORMED;
		if (ph->ppp_proto == bpf_htons(FP_PPP_IPV4))
			proto = bpf_htons(ETH_P_IP);
		else if (ph->ppp_proto == bpf_htons(FP_PPP_IPV6))
			proto = bpf_htons(ETH_P_IPV6);
		else
			return FP_STAT_PASS_NOT_IP; /* LCP, IPCP, ...: pppd's */
		off += sizeof(*ph);
	}
	/* The family is decided here, as a constant on each path: the verifier then knows
	 * which header every later access is to. */
	if (proto == bpf_htons(ETH_P_IPV6))
		pkt->ipv6 = 1;
	else if (proto != bpf_htons(ETH_P_IP))
		return FP_STAT_PASS_NOT_IP;
	pkt->l2_len = off;
	pkt->l3_proto = proto;
	return FP_CONTINUE;
}

/* IP and TCP/UDP, after fp_parse_l2(). */
static __always_inline enum fp_stat fp_parse_l3(void *data, void *data_end, __u32 frame_len,
						struct fp_pkt *pkt)
{
	__u16 off = pkt->l2_len;

	/* Bounded for the verifier: Ethernet, a tag and a PPPoE header at most. */
	if (off > sizeof(struct ethhdr) + sizeof(struct fp_vlan_hdr) + sizeof(struct fp_pppoe_hdr))
		return FP_STAT_PASS_MALFORMED;
	/* 14, 18, 22 or 26: 2 more than a multiple of 4, as the verifier is told here (a
	 * no-op on those), so that it knows the headers' alignment (strict on MIPS) when the
	 * length comes back from the stack. */
	off = (off & 0x1c) | 2;
	pkt->l3 = data + off;
	if (pkt->ipv6)
		return fp_parse_ipv6(pkt, data_end, frame_len);
	return fp_parse_ipv4(pkt, data_end, frame_len);
}

#endif /* FP_PARSE_H */
