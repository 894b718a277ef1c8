// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark's own XDP programs (not part of xdp-fastpath):
 *   xdp_gen       generator, run with BPF_PROG_TEST_RUN live frames on the client veth:
 *                 UDP frames (60 bytes for IPv4, 64 for IPv6, 64 and 68 on the wire with
 *                 the FCS) cycling over N flows, or replaying a sequence of flows
 *                 (bench_seq), sent with XDP_TX
 *   xdp_sink      on the server veth (and the client's, for replies): counts IP frames per
 *                 CPU and drops them, or passes them to the stack while flows are being
 *                 established (an echo server answers); lets ARP, ICMPv6 and the rest
 *                 through
 *   xdp_redirect  the ceiling: on the router's LAN veth, new MACs and a devmap redirect
 *                 of every IP frame, no lookup and no rewrite
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "bench.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_cfg);
} bench_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} bench_count SEC(".maps");

/* The generator's mix: the flow of each packet in turn (fp-bench writes it through mmap). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BENCH_SEQ_MAX);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} bench_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} bench_tx SEC(".maps");

static __always_inline struct bench_cfg *cfg(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&bench_cfg, &zero);
}

static __always_inline __u64 *counter(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&bench_count, &zero);
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* An IPv6/UDP frame with these ports; UDP's checksum, which IPv6 requires, over two bytes
 * of zeros after the header (the router's conntrack drops a packet whose sum is wrong). */
static __always_inline int gen_ipv6(void *data_end, struct ethhdr *eth, const struct bench_cfg *c,
				    __be16 sport, __be16 dport)
{
	struct ipv6hdr *ip6h = (void *)(eth + 1);
	struct udphdr *uh = (void *)(ip6h + 1);
	__u16 *payload = (void *)(uh + 1), *w;
	__u32 sum = 0;

	if ((void *)(payload + 1) > data_end)
		return XDP_ABORTED;
	eth->h_proto = bpf_htons(ETH_P_IPV6);
	*(__be32 *)ip6h = bpf_htonl(6 << 28); /* version, no traffic class, no flow label */
	ip6h->payload_len = bpf_htons(data_end - (void *)uh);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = 64;
	__builtin_memcpy(&ip6h->saddr, c->saddr6, 16);
	__builtin_memcpy(&ip6h->daddr, c->daddr6, 16);
	uh->source = sport;
	uh->dest = dport;
	uh->len = ip6h->payload_len;
	uh->check = 0;
	*payload = 0;
	/* The pseudo-header (both addresses, the length, the protocol) and the datagram. */
	w = (__u16 *)&ip6h->saddr;
#pragma unroll
	for (int i = 0; i < 16; i++)
		sum += w[i];
	sum += uh->len + bpf_htons(IPPROTO_UDP) + uh->source + uh->dest + uh->len;
	uh->check = csum_fold(sum) ?: 0xffff;
	return XDP_TX;
}

/* Live frames recycle pages with whatever the router left in them: write every field. */
SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	struct udphdr *uh = (void *)(iph + 1);
	struct bench_cfg *c = cfg();
	__u64 *n = counter(), flow;
	__be16 sport, dport;
	__u32 sum = 0;
	__u16 *w;

	if (!c || !n || (void *)(uh + 1) > data_end || !c->nr_flows)
		return XDP_ABORTED;
	if (c->seq_len) {
		__u32 i = (*n)++ % c->seq_len, *f = bpf_map_lookup_elem(&bench_seq, &i);

		if (!f)
			return XDP_ABORTED;
		flow = *f;
	} else {
		flow = (*n)++ % c->nr_flows;
	}
	sport = bpf_htons(BENCH_SPORT_BASE + flow % BENCH_PORTS_PER_DPORT);
	dport = bpf_htons((c->dport_base ?: BENCH_DPORT_BASE) + flow / BENCH_PORTS_PER_DPORT);
	__builtin_memcpy(eth->h_dest, c->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, c->smac, ETH_ALEN);
	if (c->ipv6)
		return gen_ipv6(data_end, eth, c, sport, dport);
	eth->h_proto = bpf_htons(ETH_P_IP);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = 0;
	iph->tot_len = bpf_htons(data_end - (void *)iph);
	iph->id = 0;
	iph->frag_off = 0;
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = c->saddr;
	iph->daddr = c->daddr;
	w = (__u16 *)iph;
#pragma unroll
	for (int i = 0; i < 10; i++)
		sum += w[i];
	iph->check = csum_fold(sum);
	uh->source = sport;
	uh->dest = dport;
	uh->len = bpf_htons(data_end - (void *)uh);
	uh->check = 0; /* allowed over IPv4 */
	return XDP_TX;
}

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bench_cfg *c = cfg();
	__u64 *n = counter();

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto != bpf_htons(ETH_P_IP) && eth->h_proto != bpf_htons(ETH_P_IPV6))
		return XDP_PASS; /* ARP and friends: the hosts still need them */
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = (void *)(eth + 1);

		/* IPv6's ARP, neighbour discovery: without it the router's entry for this host
		 * goes stale, then fails, and the router stops forwarding to it. */
		if ((void *)(ip6h + 1) > data_end || ip6h->nexthdr == IPPROTO_ICMPV6)
			return XDP_PASS;
	}
	if (n)
		(*n)++;
	return c && c->pass ? XDP_PASS : XDP_DROP;
}

SEC("xdp")
int xdp_redirect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct bench_cfg *c = cfg();
	__u64 *n = counter();

	if (!c || (void *)(eth + 1) > data_end ||
	    (eth->h_proto != bpf_htons(ETH_P_IP) && eth->h_proto != bpf_htons(ETH_P_IPV6)))
		return XDP_PASS;
	__builtin_memcpy(eth->h_dest, c->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, c->smac, ETH_ALEN);
	if (n)
		(*n)++;
	return bpf_redirect_map(&bench_tx, 0, 0);
}

char LICENSE[] SEC("license") = "GPL";
