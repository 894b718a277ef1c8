/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Layer 2 below the routed interfaces: bridge ports, 802.1Q VLANs and PPPoE sessions.
 *
 * Routing and conntrack see upper devices (br-lan, eth0.7, pppoe-wan); XDP runs on the
 * Ethernet ports below them. On ingress, fp_ingress names the upper device a frame belongs
 * to, as the kernel's bridge, VLAN and PPPoE receive paths would; it is the flow key's
 * interface and the route lookup's input. On egress, fp_egress says how to reach the wire
 * from the upper device the route lookup chose: the bridge port from fp_fdb, or a tag and a
 * PPPoE header to push. The daemon keeps all three maps (loader/topology.c).
 */
#ifndef FP_L2_H
#define FP_L2_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "xdp_fastpath.h"
#include "parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_MAX_L2_IFACES);
	__type(key, struct fp_ingress_key);
	__type(value, struct fp_ingress);
} FP_MAP_INGRESS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_MAX_L2_IFACES);
	__type(key, __u32);
	__type(value, struct fp_egress);
} FP_MAP_EGRESS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_MAX_FDB);
	__type(key, struct fp_fdb_key);
	__type(value, struct fp_fdb_port);
} FP_MAP_FDB SEC(".maps");

/* By 16-bit words: an Ethernet header's addresses are 2-byte aligned, not 4-byte (the IP
 * header after it is, on architectures that need it: NET_IP_ALIGN). */
static __always_inline bool fp_mac_equal(const __u8 *a, const __u8 *b)
{
	const __u16 *x = (const __u16 *)a, *y = (const __u16 *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2])) == 0;
}

/* A MAC address copied by 16-bit words (a byte at a time is twice the instructions): the
 * Ethernet header is 2-byte aligned, and so are the addresses in flow entries. */
static __always_inline void fp_mac_copy(__u8 *dst, const __u8 *src)
{
	_Static_assert(__builtin_offsetof(struct fp_flow_meta, dmac) % 2 == 0 &&
			       __builtin_offsetof(struct fp_flow_meta, smac) % 2 == 0,
		       "the next hop's addresses are 2-byte aligned");
	__u16 *to = (__u16 *)dst;
	const __u16 *from = (const __u16 *)src;

	to[0] = from[0];
	to[1] = from[1];
	to[2] = from[2];
}

/*
 * The upper device a frame arrived on, into *ingress (left as the port if none). A tagged or
 * PPPoE frame must belong to a VLAN or session the daemon knows; a frame on a bridge port
 * or VLAN must be addressed to the upper device, as the kernel only routes those.
 */
static __always_inline enum fp_stat fp_l2_ingress(const struct fp_pkt *pkt,
						  const struct fp_config *cfg, __u32 *ingress)
{
	struct fp_ingress_key key = {
		.ifindex = *ingress,
		.vlan_id = pkt->vlan_id,
		.pppoe_sid = pkt->pppoe_sid,
	};
	struct fp_ingress *upper;

	if (!pkt->vlan_id && !pkt->pppoe_sid && !(cfg->flags & FP_CONFIG_BRIDGE_PORTS))
		return FP_CONTINUE;
	upper = bpf_map_lookup_elem(&fp_ingress, &key);
	if (!upper) {
		if (pkt->vlan_id)
			return FP_STAT_PASS_VLAN;
		if (pkt->pppoe_sid)
			return FP_STAT_PASS_PPPOE;
		return FP_CONTINUE; /* untagged on a port of its own */
	}
	if (!fp_mac_equal(pkt->eth->h_dest, upper->mac))
		return FP_STAT_PASS_OTHER_HOST;
	/* The kernel's session lookup is by id and the peer's address. */
	if (pkt->pppoe_sid && !fp_mac_equal(pkt->eth->h_source, upper->peer))
		return FP_STAT_PASS_PPPOE;
	*ingress = upper->ifindex;
	return FP_CONTINUE;
}

/*
 * Completes a next hop the route lookup found on upper device @fib->ifindex: the port to
 * send on, the headers to push, and the MTU left for IP once they are pushed.
 */
static __always_inline enum fp_stat fp_l2_egress(const struct bpf_fib_lookup *fib,
						 struct fp_flow_meta *meta)
{
	__u32 upper = fib->ifindex, port = upper;
	struct fp_egress *eg = bpf_map_lookup_elem(&fp_egress, &upper);
	__u8 encap = 0;

	meta->mtu = fib->mtu_result;
	meta->vlan_tci = 0;
	meta->pppoe_sid = 0;
	__builtin_memcpy(meta->dmac, fib->dmac, sizeof(meta->dmac));
	__builtin_memcpy(meta->smac, fib->smac, sizeof(meta->smac));
	if (eg && !(eg->flags & FP_EGRESS_NO_XMIT)) { /* NO_XMIT: keyed by a port, below */
		if (eg->flags & FP_EGRESS_BRIDGE) {
			struct fp_fdb_key key = {.bridge = upper};
			struct fp_fdb_port *fdb;

			__builtin_memcpy(key.mac, fib->dmac, sizeof(key.mac));
			fdb = bpf_map_lookup_elem(&fp_fdb, &key);
			if (!fdb)
				return FP_STAT_PASS_NO_FDB; /* the bridge floods it and learns */
			port = fdb->ifindex;
			if (fdb->vlan_tci) {
				encap |= FP_ENCAP_VLAN;
				meta->vlan_tci = fdb->vlan_tci;
			}
		} else {
			port = eg->ifindex;
		}
		if (eg->flags & FP_EGRESS_VLAN) {
			encap |= FP_ENCAP_VLAN;
			meta->vlan_tci = eg->vlan_tci;
		}
		if (eg->flags & FP_EGRESS_PPPOE) {
			encap |= FP_ENCAP_PPPOE;
			meta->pppoe_sid = eg->pppoe_sid;
			__builtin_memcpy(meta->dmac, eg->dmac, sizeof(meta->dmac));
			__builtin_memcpy(meta->smac, eg->smac, sizeof(meta->smac));
		}
		/* A tag fits in the port's frame; PPPoE's 8 bytes come out of its MTU
		 * (RFC 2516). */
		if (eg->mtu) {
			__u16 room = eg->mtu - (eg->flags & FP_EGRESS_PPPOE ? FP_PPPOE_HLEN : 0);

			if (room < meta->mtu)
				meta->mtu = room;
		}
		/* The port below may be unable to take redirected frames now (topology.c). */
		eg = bpf_map_lookup_elem(&fp_egress, &port);
	}
	/* Only attached ports are sent to, and none of them has a larger ifindex (attach). */
	if (port > FP_MAX_FLOW_IFINDEX)
		return FP_STAT_PASS_EGRESS;
	meta->oif = port;
	/* A port that cannot take redirected XDP frames now still takes skbs: the next hop is
	 * good, marked FP_NH_SKB_ONLY for the entry points to judge (fp_decide). */
	meta->flags = (meta->flags & FP_FLOW_DAEMON_MASK) | encap |
		      (eg && (eg->flags & FP_EGRESS_NO_XMIT) ? FP_NH_SKB_ONLY : 0);
	return FP_CONTINUE;
}

/* The headers @encap puts in the frame before IP. */
static __always_inline __u16 fp_l2_len(__u8 encap)
{
	return sizeof(struct ethhdr) + (encap & FP_ENCAP_VLAN ? FP_VLAN_HLEN : 0) +
	       (encap & FP_ENCAP_PPPOE ? FP_PPPOE_HLEN : 0);
}

/*
 * Points @pkt at the headers again after bpf_xdp_adjust_head() moved the frame's start:
 * the L3 header is now @l2_len bytes in. False only if the frame no longer holds what the
 * parser saw, which cannot happen. @ipv6: whether the packet's flow is an IPv6 one, as
 * pkt->ipv6 says, but from what the rewrite after it goes by, so that the verifier sees
 * the headers checked that the rewrite writes.
 */
static __always_inline bool fp_l2_reload(void *data, void *data_end, struct fp_pkt *pkt,
					 __u16 l2_len, bool ipv6)
{
	void *l4;

	if (l2_len > sizeof(struct ethhdr) + FP_VLAN_HLEN + FP_PPPOE_HLEN)
		return false;
	pkt->eth = data;
	pkt->l3 = data + l2_len;
	if (ipv6)
		l4 = pkt->l3 + sizeof(struct ipv6hdr);
	else
		l4 = pkt->l3 + sizeof(struct iphdr); /* the parser refuses IPv4 options */
	if (pkt->proto == IPPROTO_TCP) {
		struct tcphdr *th = l4;

		if ((void *)(th + 1) > data_end)
			return false;
		pkt->l4csum = &th->check;
	} else {
		struct udphdr *uh = l4;

		if ((void *)(uh + 1) > data_end)
			return false;
		pkt->l4csum = &uh->check;
	}
	pkt->ports = l4;
	return true;
}

/* Writes the egress Ethernet header and the headers @encap pushes below IP: the frame
 * starts fp_l2_len(encap) bytes before the IP header. */
static __always_inline bool fp_l2_write(void *data, void *data_end, const struct fp_pkt *pkt,
					const struct fp_flow_meta *meta, __u8 encap)
{
	struct ethhdr *eth = data;
	__be16 *type;

	if ((void *)(eth + 1) > data_end)
		return false;
	fp_mac_copy(eth->h_dest, meta->dmac);
	fp_mac_copy(eth->h_source, meta->smac);
	type = (void *)(eth + 1) - sizeof(*type); /* h_proto, a packed member */
	if (encap & FP_ENCAP_VLAN) {
		struct fp_vlan_hdr *vlan = (void *)(eth + 1);

		if ((void *)(vlan + 1) > data_end)
			return false;
		*type = bpf_htons(ETH_P_8021Q);
		vlan->tci = meta->vlan_tci;
		type = &vlan->proto;
	}
	if (encap & FP_ENCAP_PPPOE) {
		struct fp_pppoe_hdr *ph = (void *)(type + 1);

		if ((void *)(ph + 1) > data_end)
			return false;
		*type = bpf_htons(ETH_P_PPP_SES);
		ph->ver_type = 0x11;
		ph->code = 0;
		ph->sid = meta->pppoe_sid;
		ph->length = bpf_htons(pkt->l3_len + 2);
		ph->ppp_proto = bpf_htons(pkt->ipv6 ? FP_PPP_IPV6 : FP_PPP_IPV4);
	} else {
		*type = pkt->l3_proto;
	}
	return true;
}

#endif /* FP_L2_H */
