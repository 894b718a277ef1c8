// SPDX-License-Identifier: GPL-2.0-only
/*
 * xdp-fastpath: forwards packets of flows the firewall has accepted, NAT applied, straight
 * to the egress interface. Everything else goes to the kernel unchanged, its reason counted.
 *
 *   [--steer: hash the flow, hand it to that flow's CPU, go on there]
 *   parse L2 -> upper device -> parse L3 -> heartbeat -> cheap checks -> flow lookup
 *         -> next hop -> egress -> MTU -> L2 resize -> rewrite -> redirect
 *
 * Two entry points share it: XDP (xdp_fastpath), frame by frame, and the tc ingress hook
 * (xdp_fastpath_tc), which sees skbs after GRO and forwards a TCP connection's aggregates
 * whole, for drivers without native XDP and for bulk TCP. Every decision is made before
 * the first write to the packet.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "xdp_fastpath.h"
#include "parse.h"
#include "nat.h"
#include "l2.h"
#include "nexthop.h"
#include "skb.h"

/*
 * Sizes of the flow maps are set by the loader before load (--flows). Each family's table
 * is an array of slots (struct fp_slot4, struct fp_slot6) that the daemon writes through a
 * mapping of it, twice as many as flows.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_DEFAULT_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fp_slot4);
} FP_MAP_FLOWS4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_DEFAULT_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fp_slot6);
} FP_MAP_FLOWS6 SEC(".maps");

/* One entry, per CPU, every counter in it: a forwarded packet's two counts take one lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_stats);
} FP_MAP_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_config);
} FP_MAP_CONFIG SEC(".maps");

/* Every interface the fastpath is attached to, keyed by ifindex. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, FP_MAX_TX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} FP_MAP_TX_PORTS SEC(".maps");

/* --steer: one entry per CPU, running xdp_fastpath_cpu there. Sized by the loader to the
 * number of possible CPUs, and its value to the queue size alone without --steer: before
 * 5.15 generic XDP refuses a program with a cpumap whose entries may run programs. Sizes,
 * not BTF types, so that the loader can shrink the value. */
struct {
	__uint(type, BPF_MAP_TYPE_CPUMAP);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct bpf_cpumap_val));
} FP_MAP_CPUS SEC(".maps");

/* --steer: the CPUs to spread over, fp_config.steer_cpus of them from slot 0. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FP_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} FP_MAP_STEER SEC(".maps");

/* The conntrack marks of flows that have one (FP_FLOW_MARK), under the flow's key: read
 * when a flow's next hop is looked up, so they stay out of the entry every packet reads. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_DEFAULT_FLOWS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fp_flow_key4);
	__type(value, __u32);
} FP_MAP_MARKS4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_DEFAULT_FLOWS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fp_flow_key6);
	__type(value, __u32);
} FP_MAP_MARKS6 SEC(".maps");

/* The translations of NAT66 flows, under the flow's key (struct fp_nat6): read for every
 * packet of such a flow, so that the entry every IPv6 packet reads stays small. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_DEFAULT_FLOWS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct fp_flow_key6);
	__type(value, struct fp_nat6);
} FP_MAP_NAT6 SEC(".maps");

/* The next-hop contexts of IPv6 flows, and the claims that take their free entries. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * FP_NH_CTX_HALF);
	__type(key, __u32);
	__type(value, struct fp_nh_ctx);
} FP_MAP_NH_CTX SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2 * FP_NH_CTX_HALF);
	__type(key, __u32);
	__type(value, struct fp_nh_ctx);
} FP_MAP_NH_CLAIM SEC(".maps");

/* FP_PORT_* of the attached ports that have any. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FP_MAX_TX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} FP_MAP_PORTS SEC(".maps");

/* Userspace only: the daemon's counters, pinned beside the rest for operators. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fp_daemon_state);
} FP_MAP_DAEMON SEC(".maps");

/* FP_KERNEL_*: what this kernel offers, fixed by the loader before load. */
const volatile __u32 fp_kernel = 0;
/* fp_flows4's slots less one (a power of two less one), fixed by the loader before load. */
const volatile __u32 fp_slots4_mask = FP_DEFAULT_SLOTS - 1;
/* fp_flows6's. */
const volatile __u32 fp_slots6_mask = FP_DEFAULT_SLOTS - 1;

/* This CPU's counters: never NULL in practice (an array's entry). */
static __always_inline struct fp_stats *fp_stats_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&fp_stats, &zero);
}

static __always_inline void fp_count(enum fp_stat stat, __u64 value)
{
	struct fp_stats *stats = fp_stats_here();

	/* The bound is for the verifier, which cannot always tell a reason's range. */
	if (stats && stat < FP_STAT_MAX)
		stats->count[stat] += value;
}

static __always_inline int fp_pass(enum fp_stat reason)
{
	fp_count(reason, 1);
	return XDP_PASS;
}

/* The configuration, fp_config's one entry: never NULL in practice (an array's entry),
 * but the verifier wants the check. */
static __always_inline const struct fp_config *fp_config_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&fp_config, &zero);
}

/* CLOCK_MONOTONIC from jiffies (struct fp_clock): tick resolution is plenty for leases and
 * idle times, for a fraction of what reading a clocksource costs (make bench-prog). Signed:
 * a read that races the daemon's writing a new clock is off for one packet, not wrapped. */
static __always_inline __u64 fp_clock_now(const struct fp_config *cfg)
{
	if ((fp_kernel & FP_KERNEL_JIFFIES) && cfg->clock.tick_ns)
		return cfg->clock.ns +
		       (__s64)(bpf_jiffies64() - cfg->clock.jiffies) * (__s64)cfg->clock.tick_ns;
	return bpf_ktime_get_ns();
}

static __always_inline bool fp_heartbeat_ok(const struct fp_config *cfg, __u64 now)
{
	if (cfg->nh_gen == 0) /* not configured by userspace yet */
		return false;
	/* Written as a sum: a heartbeat a tick ahead of our clock must not wrap around. */
	return cfg->lease_ns == 0 || now <= cfg->heartbeat_ns + cfg->lease_ns;
}

/*
 * The last 8 bytes of either family's key, the ports and then the ingress interface and
 * the protocol, as two 32-bit words. Keys are written a word at a time: the map's hash
 * reads them by the word, and a word that narrower stores wrote cannot be forwarded to it
 * from the store buffer (about 4 ns a lookup, make bench-prog).
 */
static __always_inline void fp_key_tail(const struct fp_pkt *pkt, __u32 ingress, __u32 *word)
{
	union {
		__be16 port[2];
		__u32 word;
	} ports = {.port = {pkt->ports[0], pkt->ports[1]}};
	union {
		struct {
			__u16 ifindex;
			__u8 proto, pad;
		};
		__u32 word;
	} tail = {.ifindex = ingress, .proto = pkt->proto};

	_Static_assert(sizeof(tail) == 4, "the key's tail word");
	word[0] = ports.word;
	word[1] = tail.word;
}

static __always_inline void fp_key4(const struct fp_pkt *pkt, __u32 ingress,
				    struct fp_flow_key4 *key)
{
	const struct iphdr *iph = pkt->l3;
	__u32 *word = (__u32 *)key;

	word[0] = iph->saddr;
	word[1] = iph->daddr;
	fp_key_tail(pkt, ingress, &word[2]);
}

static __always_inline void fp_key6(const struct fp_pkt *pkt, __u32 ingress,
				    struct fp_flow_key6 *key)
{
	const struct ipv6hdr *ip6h = pkt->l3;
	__u32 *word = (__u32 *)key;

#pragma unroll
	for (int i = 0; i < 4; i++) {
		word[i] = ip6h->saddr.in6_u.u6_addr32[i];
		word[4 + i] = ip6h->daddr.in6_u.u6_addr32[i];
	}
	fp_key_tail(pkt, ingress, &word[8]);
}

/*
 * The slot of the IPv4 flow of a packet that arrived on @ingress, which fits a key
 * (FP_MAX_FLOW_IFINDEX), or NULL. The key is compared as two words built in registers: a
 * LIVE slot's, with or without CLOSING, matches; a FREE slot ends the search.
 */
static __always_inline struct fp_slot4 *fp_lookup4(const struct fp_pkt *pkt, __u32 ingress)
{
	const struct iphdr *iph = pkt->l3;
	__u32 tail[2];
	__u64 w0, w1;
	__u32 at;

	fp_key_tail(pkt, ingress, tail);
	w0 = FP_WORDS64(iph->saddr, iph->daddr);
	w1 = FP_WORDS64(tail[0], tail[1]);
	at = fp_slot_hash(w0, w1, fp_slots4_mask);
	w1 |= FP_SLOT_STATE_BITS(FP_SLOT_LIVE);

	for (int i = 0; i < FP_SLOT_PROBES; i++) {
		__u32 index = (at + i) & fp_slots4_mask;
		struct fp_slot4 *slot = bpf_map_lookup_elem(&fp_flows4, &index);
		__u64 s1;

		if (!slot)
			return NULL;
		s1 = *((__u64 *)&slot->key + 1);
		if (*(__u64 *)&slot->key == w0 && (s1 & ~FP_SLOT_STATE_BITS(FP_SLOT_CLOSING)) == w1)
			return slot;
		if (!(s1 & FP_SLOT_STATE_BITS(0xff)))
			return NULL; /* FREE */
	}
	return NULL;
}

/* The same of an IPv6 flow, its key compared as five words. */
static __always_inline struct fp_slot6 *fp_lookup6(const struct fp_pkt *pkt, __u32 ingress)
{
	const struct ipv6hdr *ip6h = pkt->l3;
	const __u32 *saddr = ip6h->saddr.in6_u.u6_addr32, *daddr = ip6h->daddr.in6_u.u6_addr32;
	__u32 tail[2];
	__u64 w[5];
	__u32 at;

	fp_key_tail(pkt, ingress, tail);
	w[0] = FP_WORDS64(saddr[0], saddr[1]);
	w[1] = FP_WORDS64(saddr[2], saddr[3]);
	w[2] = FP_WORDS64(daddr[0], daddr[1]);
	w[3] = FP_WORDS64(daddr[2], daddr[3]);
	w[4] = FP_WORDS64(tail[0], tail[1]);
	at = fp_slot_hash6(w, fp_slots6_mask);
	w[4] |= FP_SLOT_STATE_BITS(FP_SLOT_LIVE);

	for (int i = 0; i < FP_SLOT_PROBES; i++) {
		__u32 index = (at + i) & fp_slots6_mask;
		struct fp_slot6 *slot = bpf_map_lookup_elem(&fp_flows6, &index);
		const __u64 *k;
		__u64 s4;

		if (!slot)
			return NULL;
		k = (const __u64 *)&slot->key;
		s4 = k[4];
		if (k[0] == w[0] && k[1] == w[1] && k[2] == w[2] && k[3] == w[3] &&
		    (s4 & ~FP_SLOT_STATE_BITS(FP_SLOT_CLOSING)) == w[4])
			return slot;
		if (!(s4 & FP_SLOT_STATE_BITS(0xff)))
			return NULL; /* FREE */
	}
	return NULL;
}

/* An IPv6 flow's translation from the side map, or NULL (being inserted or removed). */
static __always_inline const struct fp_nat6 *fp_lookup_nat6(const struct fp_pkt *pkt, __u32 ingress)
{
	struct fp_flow_key6 key;

	fp_key6(pkt, ingress, &key);
	return bpf_map_lookup_elem(&fp_nat6, &key);
}

/* The conntrack mark of a flow with FP_FLOW_MARK, from the side map; false if it has none
 * there (the daemon writes it before the flow and removes it after). */
static __always_inline bool fp_flow_mark(const struct fp_pkt *pkt, __u32 ingress, __u32 *mark)
{
	__u32 *value;

	if (pkt->ipv6) {
		struct fp_flow_key6 key;

		fp_key6(pkt, ingress, &key);
		value = bpf_map_lookup_elem(&fp_marks6, &key);
	} else {
		struct fp_flow_key4 key;

		fp_key4(pkt, ingress, &key);
		value = bpf_map_lookup_elem(&fp_marks4, &key);
	}
	if (!value)
		return false;
	*mark = *value;
	return true;
}

/* Whether attached port @port has FP_PORT_* @flag (fp_ports, written by attach). */
static __always_inline bool fp_port_has(__u32 port, __u32 flag)
{
	__u32 *flags = bpf_map_lookup_elem(&fp_ports, &port);

	return flags && (*flags & flag);
}

/*
 * TCP on a port where it is the tc hook's (FP_PORT_TCP_TO_TC): XDP would forward it frame
 * by frame, where the kernel's GRO makes 64 KB aggregates of it that the tc hook forwards
 * whole, for less per byte. UDP and the rest stay XDP's, and so does what XDP would not
 * forward anyway: that goes to the kernel by its own reason.
 */
static __always_inline bool fp_tcp_to_tc(const struct fp_pkt *pkt, const struct fp_config *cfg,
					 __u32 port)
{
	if (pkt->proto != IPPROTO_TCP || !(cfg->flags & FP_CONFIG_TCP_TO_TC))
		return false;
	return fp_port_has(port, FP_PORT_TCP_TO_TC);
}

/*
 * A partial checksum on a port that may hand one over (FP_PORT_PARTIAL_CSUM): a redirect
 * would send it on unfinished, an XDP frame having no skb to say so, and the receiver
 * would drop it. The kernel's path finishes it. A tap's guest sends every packet so while
 * its virtio NIC offloads checksums: --mode auto takes the tc hook for a tap, which
 * forwards them right.
 */
static __always_inline bool fp_partial_csum(const struct fp_pkt *pkt, const struct fp_config *cfg,
					    __u32 port)
{
	if (!(cfg->flags & FP_CONFIG_PARTIAL_CSUM))
		return false;
	return fp_port_has(port, FP_PORT_PARTIAL_CSUM) && fp_l4csum_partial(pkt);
}

/* TCP segments the fastpath leaves to conntrack; FIN and RST also close the flow. */
static __always_inline enum fp_stat fp_check_tcp(const struct fp_pkt *pkt, __u8 *state)
{
	if (pkt->tcp_flags & (FP_TCP_FIN | FP_TCP_RST)) {
		/* Conntrack must see the teardown; the daemon removes the flow. A store, not an
		 * update: a slot the daemon deleted meanwhile comes back LIVE and CLOSING, which
		 * passes every packet, and which it deletes again. */
		*state = FP_SLOT_LIVE | FP_SLOT_CLOSING;
		return FP_STAT_PASS_TCP_FLAGS;
	}
	return FP_CONTINUE;
}

/* A parsed packet on its way through the fastpath: its flow, and where it goes. */
struct fp_fwd {
	struct fp_pkt pkt;
	__u32 port;    /* the attached port it arrived on */
	__u32 ingress; /* the flow key's interface: the port, or the upper device above it */
	struct fp_flow4 *flow4;
	struct fp_flow6 *flow6;
	const struct fp_nat6 *nat6; /* an IPv6 flow's translation, if it has one */
	__u8 *state; /* FP_SLOT_*: the last byte of its slot's key */
	__u64 *bytes;
	__u32 *packets;
	__u8 *last_seen;
	struct fp_flow_meta *meta; /* the IPv4 entry's, or an IPv6 flow's fp_nh_ctx entry's */
	__u64 now;
};

/*
 * The fp_nh_ctx entry holding next hop @meta (nh_gen and last_seen 0, only the next hop's
 * flags) in generation @gen's half, taken and written if there is none: its index, or -1
 * if the half has no room near the next hop's hash, or another program is writing the
 * free entry found (a later packet tries again). An entry is written once, before it is
 * marked used, and a program that takes an index has compared it whole; it never changes
 * while a cached next hop can name it.
 */
static __always_inline int fp_nh_ctx_find(const struct fp_flow_meta *meta, __u32 gen)
{
	struct fp_nh_ctx want __attribute__((aligned(8))) = {.meta = *meta, .used = 1};
	const __u64 *w = (const __u64 *)&want.meta;
	__u32 base = fp_nh_ctx_half(gen) * FP_NH_CTX_HALF, at;

	at = fp_slot_hash(w[0] ^ w[2], w[1], FP_NH_CTX_HALF - 1);
	for (int i = 0; i < FP_NH_CTX_PROBES; i++) {
		__u32 index = base + ((at + i) & (FP_NH_CTX_HALF - 1));
		struct fp_nh_ctx *ctx = bpf_map_lookup_elem(&fp_nh_ctx, &index);
		__u64 *have;

		if (!ctx)
			return -1;
		have = (__u64 *)&ctx->meta;
		if (ctx->used) {
			if (have[0] == w[0] && have[1] == w[1] && have[2] == w[2])
				return index;
			continue;
		}
		if (bpf_map_update_elem(&fp_nh_ctx_claim, &index, &want, BPF_NOEXIST))
			return -1;
		have[0] = w[0];
		have[1] = w[1];
		have[2] = w[2];
		asm volatile("" ::: "memory");
		ctx->used = 1;
		return index;
	}
	return -1;
}

/* Looks a flow's next hop up into @meta, for generation @gen (nexthop.h). */
static __always_inline enum fp_stat fp_resolve(void *ctx, const struct fp_config *cfg,
					       struct fp_fwd *fwd, struct fp_flow_meta *meta,
					       __u32 gen)
{
	/* Zeroed here, not for every packet: most find their next hop cached. */
	struct bpf_fib_lookup fib = {};
	__u32 mark = 0;

	if ((meta->flags & FP_FLOW_MARK) && !fp_flow_mark(&fwd->pkt, fwd->ingress, &mark))
		return FP_STAT_PASS_NO_FLOW; /* being inserted or removed */
	if (fwd->flow6)
		fp_fib_params6(&fib, &fwd->pkt, meta->flags, fwd->nat6, fwd->ingress);
	else if (fwd->flow4)
		fp_fib_params4(&fib, &fwd->pkt, fwd->flow4, fwd->ingress);
	return fp_nexthop_resolve(ctx, &fib, meta, gen, mark, fp_kernel & FP_KERNEL_FIB_MARK,
				  fp_kernel & FP_KERNEL_FIB_MTU);
}

/*
 * An IPv6 flow's next hop: fwd->meta points at its fp_nh_ctx entry, looked up and taken
 * first if the flow's is stale. Its translation too, which the lookup needs (a NAT66
 * flow's, from the side map).
 */
static __always_inline enum fp_stat fp_nexthop6(void *ctx, const struct fp_config *cfg,
						struct fp_fwd *fwd)
{
	struct fp_flow6 *flow = fwd->flow6;
	__u32 gen = cfg->nh_gen, index;
	struct fp_nh_ctx *nc;

	if (flow->flags & (FP_FLOW_SNAT | FP_FLOW_DNAT)) {
		fwd->nat6 = fp_lookup_nat6(&fwd->pkt, fwd->ingress);
		if (!fwd->nat6)
			return FP_STAT_PASS_NO_FLOW; /* being inserted or removed */
	}
	if (flow->nh_gen != (__u8)gen) {
		/* Made here, not for every packet: most find their next hop cached. */
		struct fp_flow_meta meta = {.flags = flow->flags};
		enum fp_stat reason;
		int found;

		reason = fp_resolve(ctx, cfg, fwd, &meta, gen);
		if (reason != FP_CONTINUE)
			return reason;
		meta.nh_gen = 0;
		meta.flags &= FP_NH_MASK;
		found = fp_nh_ctx_find(&meta, gen);
		if (found < 0)
			return FP_STAT_PASS_NH_CTX;
		flow->nh_ctx = found;
		/* The generation last, as fp_nexthop_resolve publishes an IPv4 entry's. */
		asm volatile("" ::: "memory");
		flow->nh_gen = gen;
	}
	index = flow->nh_ctx;
	nc = bpf_map_lookup_elem(&fp_nh_ctx, &index);
	if (!nc)
		return FP_STAT_PASS_NH_CTX;
	fwd->meta = &nc->meta;
	return FP_CONTINUE;
}

/*
 * What both entry points decide alike, after parsing and before the first write: the
 * lease, the packets that stay with the kernel, the flow, its next hop and its egress.
 * FP_CONTINUE: forward it. @skb: called from the tc entry point.
 */
static __always_inline enum fp_stat fp_decide(void *ctx, const struct fp_config *cfg,
					      struct fp_fwd *fwd, bool skb)
{
	struct fp_pkt *pkt = &fwd->pkt;
	struct fp_flow_meta *meta;
	enum fp_stat reason;
	__u32 oif;

	fwd->now = fp_clock_now(cfg);
	if (!fp_heartbeat_ok(cfg, fwd->now))
		return FP_STAT_PASS_HEARTBEAT;

	/* The kernel sends ICMP Time Exceeded. */
	if (pkt->ttl <= 1)
		return FP_STAT_PASS_TTL;
	/* SYN, and segments conntrack calls invalid (no ACK), stay with the kernel. */
	if (pkt->proto == IPPROTO_TCP &&
	    ((pkt->tcp_flags & FP_TCP_SYN) || !(pkt->tcp_flags & (FP_TCP_ACK | FP_TCP_RST))))
		return FP_STAT_PASS_TCP_FLAGS;

	/* No flow has a key for an interface whose ifindex does not fit one. */
	if (fwd->ingress > FP_MAX_FLOW_IFINDEX)
		return FP_STAT_PASS_NO_FLOW;
	if (pkt->ipv6) {
		struct fp_slot6 *slot = fp_lookup6(pkt, fwd->ingress);

		if (!slot)
			return FP_STAT_PASS_NO_FLOW;
		fwd->flow6 = &slot->flow;
		fwd->state = &slot->key.state;
		fwd->bytes = &slot->flow.bytes;
		fwd->packets = &slot->flow.packets;
		fwd->last_seen = &slot->flow.last_seen;
		meta = NULL; /* its next hop's, below */
	} else {
		struct fp_slot4 *slot = fp_lookup4(pkt, fwd->ingress);

		if (!slot)
			return FP_STAT_PASS_NO_FLOW;
		fwd->flow4 = &slot->flow;
		fwd->state = &slot->key.state;
		fwd->bytes = &slot->flow.bytes;
		fwd->packets = &slot->flow.packets;
		fwd->last_seen = &slot->flow.meta.last_seen;
		meta = &slot->flow.meta;
	}
	fwd->meta = meta;

	if (pkt->proto == IPPROTO_TCP) {
		reason = fp_check_tcp(pkt, fwd->state);
		if (reason != FP_CONTINUE)
			return reason;
	}
	if (*fwd->state & FP_SLOT_CLOSING)
		return FP_STAT_PASS_CLOSING;

	if (fwd->flow6) {
		reason = fp_nexthop6(ctx, cfg, fwd);
		if (reason != FP_CONTINUE)
			return reason;
		meta = fwd->meta;
	} else if (meta->nh_gen != (__u16)cfg->nh_gen) {
		reason = fp_resolve(ctx, cfg, fwd, meta, cfg->nh_gen);
		if (reason != FP_CONTINUE)
			return reason;
	}
	/* An egress that takes no XDP frames takes skbs: those of the tc entry point, and
	 * of the XDP entry point on a port in generic mode. */
	if (!skb && (meta->flags & FP_NH_SKB_ONLY) && !fp_port_has(fwd->port, FP_PORT_GENERIC))
		return FP_STAT_PASS_EGRESS;
	oif = meta->oif;
	/* XDP: the redirect is set up now, its devmap lookup the egress check (one lookup
	 * a packet, not two). It takes effect only if the program returns XDP_REDIRECT, so
	 * a packet can still be passed after it. */
	if (!skb && bpf_redirect_map(&fp_tx_ports, oif, XDP_PASS) != XDP_REDIRECT)
		return FP_STAT_PASS_EGRESS;
	if (skb && !bpf_map_lookup_elem(&fp_tx_ports, &oif))
		return FP_STAT_PASS_EGRESS;
	return FP_CONTINUE;
}

/* The address and port rewrite; the L4 checksum's deltas are left to the caller. */
static __always_inline void fp_rewrite(struct fp_fwd *fwd, struct fp_l4_delta *l4)
{
	if (fwd->flow6)
		fp_rewrite6(&fwd->pkt, fwd->flow6->flags, fwd->nat6, l4);
	else if (fwd->flow4)
		fp_rewrite4(&fwd->pkt, fwd->flow4, l4);
}

/* Counts a forwarded packet: @segs segments on the wire (more than one: a GRO aggregate),
 * @l3_bytes in all of them. */
static __always_inline void fp_account(struct fp_fwd *fwd, __u32 segs, __u32 l3_bytes)
{
	struct fp_stats *stats;

	*fwd->last_seen = fwd->now >> FP_STAMP_SHIFT;
	/* Where the JIT has no 64-bit atomic add (32-bit ARM), one would send the whole
	 * program to the interpreter: plain adds there. A flow's direction is one CPU's at a
	 * time (its RX queue's, or its RPS CPU's), so they miss a packet only if two CPUs
	 * forward the same direction at the same instant, as its traffic moves between them. */
	if (fp_kernel & FP_KERNEL_JIT_ATOMICS) {
		__sync_fetch_and_add(fwd->packets, segs);
		__sync_fetch_and_add(fwd->bytes, l3_bytes);
	} else {
		*fwd->packets += segs;
		*fwd->bytes += l3_bytes;
	}
	stats = fp_stats_here();
	if (!stats)
		return;
	stats->count[FP_STAT_FORWARDED]++;
	stats->count[FP_STAT_FORWARDED_BYTES] += l3_bytes;
	if (segs > 1) {
		stats->count[FP_STAT_FORWARDED_GSO]++;
		stats->count[FP_STAT_FORWARDED_GSO_SEGS] += segs;
	}
}

/* The fastpath for an XDP frame, on the CPU it arrived on or, with --steer, its flow's. */
static __always_inline int fp_forward_xdp(struct xdp_md *ctx, const struct fp_config *cfg)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 frame_len = data_end - data;
	struct fp_fwd fwd = {.port = ctx->ingress_ifindex, .ingress = ctx->ingress_ifindex};
	struct fp_pkt *pkt = &fwd.pkt;
	struct fp_l4_delta l4;
	struct fp_flow_meta *meta;
	enum fp_stat reason;
	__u16 l2_len;
	__u8 encap;

	reason = fp_parse_l2(data, data_end, frame_len, pkt);
	if (reason == FP_CONTINUE)
		reason = fp_l2_ingress(pkt, cfg, &fwd.ingress);
	if (reason == FP_CONTINUE)
		reason = fp_parse_l3(data, data_end, frame_len, pkt);
	if (reason == FP_CONTINUE)
		reason = fp_decide(ctx, cfg, &fwd, false);
	/* A PPPoE session in or out stays XDP's: the tc hook leaves PPPoE in, and aggregates
	 * out, to the kernel. */
	if (reason == FP_CONTINUE && fp_tcp_to_tc(pkt, cfg, fwd.port) && !pkt->pppoe_sid &&
	    !(fwd.meta->flags & FP_ENCAP_PPPOE))
		reason = FP_STAT_PASS_TCP_TO_TC;
	if (reason == FP_CONTINUE && fp_partial_csum(pkt, cfg, fwd.port))
		reason = FP_STAT_PASS_PARTIAL_CSUM;
	if (reason != FP_CONTINUE)
		return fp_pass(reason);
	meta = fwd.meta;

	/* Too big: the kernel fragments or sends ICMP Fragmentation Needed / Packet Too Big.
	 * What follows the Ethernet header counts, padding included (the parser made sure the
	 * IP packet is within it): the redirect drops a frame longer than the egress takes,
	 * however short its IP packet, where the kernel's path trims the padding. */
	if (frame_len - pkt->l2_len > meta->mtu)
		return fp_pass(FP_STAT_PASS_MTU);

	/* A tag or PPPoE header in or out: move the frame's start. Nothing is written yet, so
	 * a failure still passes the packet as it came. */
	encap = meta->flags & FP_ENCAP_MASK;
	l2_len = fp_l2_len(encap);
	if (l2_len != pkt->l2_len) {
		if (bpf_xdp_adjust_head(ctx, (int)pkt->l2_len - (int)l2_len))
			return fp_pass(FP_STAT_PASS_NO_HEADROOM);
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
		if (!fp_l2_reload(data, data_end, pkt, l2_len, fwd.flow6))
			return XDP_ABORTED;
	}

	/* Decided: from here on the packet is forwarded. */
	fp_rewrite(&fwd, &l4);
	fp_l4csum_apply(pkt, &l4);
	if (!fp_l2_write(data, data_end, pkt, meta, encap))
		return XDP_ABORTED;
	fp_account(&fwd, 1, pkt->l3_len);
	return XDP_REDIRECT; /* to the port fp_decide() set up */
}

/*
 * --steer: hands the packet to its flow's CPU through fp_cpus, like RPS does for the
 * kernel's path, for NICs with fewer receive queues than the router has cores. The CPU
 * comes from a hash of addresses and ports, so a flow's packets stay in order. False if
 * the packet is to be handled here (not TCP/UDP over IP, or no entry for that CPU).
 */
static __always_inline bool fp_steer_to_cpu(struct xdp_md *ctx, const struct fp_config *cfg)
{
	struct fp_pkt pkt = {};
	__u32 hash, slot, *cpu;

	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 frame_len = data_end - data;

	if (fp_parse_l2(data, data_end, frame_len, &pkt) != FP_CONTINUE ||
	    fp_parse_l3(data, data_end, frame_len, &pkt) != FP_CONTINUE)
		return false;
	if (pkt.ipv6) {
		const struct ipv6hdr *ip6h = pkt.l3;

		hash = 0;
#pragma unroll
		for (int i = 0; i < 4; i++)
			hash ^= ip6h->saddr.in6_u.u6_addr32[i] ^ ip6h->daddr.in6_u.u6_addr32[i];
	} else {
		const struct iphdr *iph = pkt.l3;

		hash = iph->saddr ^ iph->daddr;
	}
	hash ^= *(const __u32 *)pkt.ports;
	hash *= 0x9e3779b1; /* Fibonacci hashing: the high bits mix every input bit */
	hash ^= hash >> 16;
	/* hash * n / 2^32: a slot below n by the high bits, and no division (which 32-bit
	 * ARM's JIT before 6.7 cannot compile: the whole program would be interpreted). */
	slot = ((__u64)hash * cfg->steer_cpus) >> 32;
	cpu = bpf_map_lookup_elem(&fp_steer, &slot);
	/* No entry for that CPU (offline): 0 comes back, and the packet is handled here. */
	if (!cpu || bpf_redirect_map(&fp_cpus, *cpu, 0) != XDP_REDIRECT)
		return false;
	fp_count(FP_STAT_STEERED, 1);
	return true;
}

SEC("xdp")
int FP_PROG(struct xdp_md *ctx)
{
	const struct fp_config *cfg = fp_config_get();

	if (!cfg)
		return XDP_PASS;
	if (cfg->steer_cpus && fp_steer_to_cpu(ctx, cfg))
		return XDP_REDIRECT;
	return fp_forward_xdp(ctx, cfg);
}

/* Run by a fp_cpus entry on the CPU a packet was steered to. */
SEC("xdp/cpumap")
int FP_PROG_CPU(struct xdp_md *ctx)
{
	const struct fp_config *cfg = fp_config_get();

	if (!cfg)
		return XDP_PASS;
	return fp_forward_xdp(ctx, cfg);
}

/*
 * The fastpath for an skb at the tc ingress hook, after GRO: an aggregate of a TCP
 * connection goes out whole, for the egress to cut (GSO, or the NIC's TSO). Passing is
 * TC_ACT_UNSPEC: the next tc program or filter, if any, then the kernel.
 */
static __always_inline int fp_forward_tc(struct __sk_buff *skb, const struct fp_config *cfg)
{
	struct fp_fwd fwd = {.port = skb->ifindex, .ingress = skb->ifindex};
	struct fp_pkt *pkt = &fwd.pkt;
	struct fp_flow_meta *meta;
	struct fp_l4_delta l4;
	void *data, *data_end;
	enum fp_stat reason;
	__u32 csum_off, segs;

	/* The headers must be in the skb's linear part to be read in place. */
	if (skb->data_end - skb->data < FP_SKB_HEADERS && skb->len > skb->data_end - skb->data)
		bpf_skb_pull_data(skb, skb->len < FP_SKB_HEADERS ? skb->len : FP_SKB_HEADERS);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;

	reason = fp_parse_l2(data, data_end, skb->len, pkt);
	if (reason == FP_CONTINUE)
		reason = fp_skb_vlan(skb, pkt);
	if (reason == FP_CONTINUE)
		reason = fp_l2_ingress(pkt, cfg, &fwd.ingress);
	if (reason == FP_CONTINUE)
		reason = fp_parse_l3(data, data_end, skb->len, pkt);
	/* PPPoE in stays with the kernel: no helper takes a header out of an skb whose
	 * protocol is not IP (generic XDP can: auto gives a PPPoE WAN that). */
	if (reason == FP_CONTINUE && pkt->pppoe_sid)
		reason = FP_STAT_PASS_PPPOE;
	if (reason == FP_CONTINUE)
		reason = fp_decide(skb, cfg, &fwd, true);
	/* PPPoE out: a packet gets the session header. An aggregate stays with the kernel
	 * (its segments would each need one, which GSO does not add), and so does a packet
	 * whose checksum is partial: the kernel's path finishes it at the ppp device, which
	 * offloads no checksum. The redirect leaves it to the port below, the skb's protocol
	 * still IP (no helper makes it PPPoE): a NIC that offloads only IP checksums may not
	 * find TCP or UDP behind the session header, and a veth hands it on unfinished
	 * (test_pppoe: forwarded so, the connection stalled). */
	if (reason == FP_CONTINUE && (fwd.meta->flags & FP_ENCAP_PPPOE) &&
	    (skb->gso_size || fp_l4csum_partial(pkt)))
		reason = FP_STAT_PASS_PPPOE;
	if (reason == FP_CONTINUE && fp_skb_wire_len(skb, pkt) > fwd.meta->mtu)
		reason = FP_STAT_PASS_MTU;
	if (reason != FP_CONTINUE) {
		fp_count(reason, 1);
		return TC_ACT_UNSPEC;
	}
	meta = fwd.meta;

	/* Room for the session header before the frame, which then starts with a new
	 * Ethernet header. The skb's network header stays on IP, where a driver finishing a
	 * partial checksum looks (bpf_skb_adjust_room would move it onto the session header).
	 * Nothing is written yet, so a failure still passes the packet as it came. */
	if (meta->flags & FP_ENCAP_PPPOE) {
		if (bpf_skb_change_head(skb, FP_PPPOE_HLEN, 0)) {
			fp_count(FP_STAT_PASS_NO_HEADROOM, 1);
			return TC_ACT_UNSPEC;
		}
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
		if (!fp_l2_reload(data, data_end, pkt, sizeof(struct ethhdr) + FP_PPPOE_HLEN,
				  fwd.flow6))
			return TC_ACT_SHOT;
	}

	/* Decided: from here on the packet is forwarded. Written in place first; the
	 * kernel's helpers after, as they move the packet's pointers. */
	csum_off = (void *)pkt->l4csum - data;
	fp_rewrite(&fwd, &l4);
	if (!fp_l2_write(data, data_end, pkt, meta, meta->flags & FP_ENCAP_PPPOE))
		return TC_ACT_SHOT;
	fp_skb_l4csum_apply(skb, pkt, csum_off, &l4);
	if (!fp_skb_vlan_write(skb, meta))
		return TC_ACT_SHOT;

	segs = fp_skb_segs(skb, pkt);
	fp_account(&fwd, segs, pkt->l3_len + (segs - 1) * pkt->l3l4_hlen);
	return bpf_redirect(meta->oif, 0);
}

SEC("tc")
int FP_PROG_TC(struct __sk_buff *skb)
{
	const struct fp_config *cfg = fp_config_get();

	if (!cfg)
		return TC_ACT_UNSPEC;
	return fp_forward_tc(skb, cfg);
}

char LICENSE[] SEC("license") = "GPL";
