/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one header shared by the XDP program (bpf/) and userspace (loader/, tests/).
 *
 * Every struct here is a map key or value: fixed-width types, explicit padding, sizes
 * asserted at the end. Fields marked "be" hold network byte order; all others host order.
 */
#ifndef XDP_FASTPATH_H
#define XDP_FASTPATH_H

#include <linux/types.h>

/*
 * Map and program names: the identifiers of the BPF object (so bpftool shows them) and,
 * through FP_NAME, the names of their pins under the pin directory. Written once here.
 */
#define FP_MAP_FLOWS4	fp_flows4
#define FP_MAP_FLOWS6	fp_flows6
#define FP_MAP_STATS	fp_stats
#define FP_MAP_CONFIG	fp_config
#define FP_MAP_TX_PORTS fp_tx_ports
#define FP_MAP_DAEMON	fp_daemon
#define FP_MAP_INGRESS	fp_ingress
#define FP_MAP_EGRESS	fp_egress
#define FP_MAP_FDB	fp_fdb
#define FP_MAP_CPUS	fp_cpus
#define FP_MAP_STEER	fp_steer
#define FP_MAP_PORTS	fp_ports
#define FP_MAP_MARKS4	fp_marks4
#define FP_MAP_MARKS6	fp_marks6
#define FP_MAP_NAT6	fp_nat6
#define FP_MAP_NH_CTX	fp_nh_ctx
#define FP_MAP_NH_CLAIM fp_nh_ctx_claim
#define FP_PROG		xdp_fastpath
#define FP_PROG_CPU	xdp_fastpath_cpu /* the fastpath, run by a cpumap entry (--steer) */
#define FP_PROG_TC	xdp_fastpath_tc	 /* the fastpath at the tc ingress hook */
#define FP_NAME_(x)	#x
#define FP_NAME(x)	FP_NAME_(x) /* the string of an identifier above */

#define FP_DEFAULT_FLOWS    65536  /* per family, set at load time */
#define FP_DEFAULT_SLOTS    131072 /* fp_slots_for(FP_DEFAULT_FLOWS) */
#define FP_MAX_TX_PORTS	    64	   /* interfaces the fastpath may redirect to */
#define FP_MAX_L2_IFACES    256	   /* fp_ingress and fp_egress entries */
#define FP_MAX_FDB	    4096   /* bridge forwarding entries of bridges it serves */
#define FP_MAX_CPUS	    256	   /* CPUs --steer can use */
#define FP_DEFAULT_PIN_ROOT "/sys/fs/bpf/xdp-fastpath"

/*
 * Flow key: one entry per direction of a connection. The ingress interface is part of the
 * key, so a packet with a flow's tuple arriving on another interface never matches. It is
 * 16 bits wide, so that an IPv4 key and its flow fill one 64-byte slot of the table (struct
 * fp_slot4); an interface whose ifindex is larger gets no flows (the daemon does not
 * offload them, the datapath passes its packets). Keys must be zeroed before filling.
 */
#define FP_MAX_FLOW_IFINDEX 0xffff

struct fp_flow_key4 {
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	__u16 ifindex; /* ingress */
	__u8 proto;    /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 state;    /* FP_SLOT_*: 0 in every key but a slot's (fp_marks4's, the daemon's) */
};

struct fp_flow_key6 {
	__be32 saddr[4];
	__be32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u16 ifindex; /* ingress */
	__u8 proto;
	__u8 state; /* FP_SLOT_*: 0 in every key but a slot's, as fp_flow_key4's */
};

/*
 * A flow's state: the last byte of its slot's key (fp_slot4, fp_slot6).
 * A table's slots go FREE -> RESERVED (the daemon writes the entry) -> LIVE (a grace
 * period later: no reader sees the key before the rest) -> DELETED -> VACANT (a grace
 * period later: no program still holds it) -> RESERVED. A lookup matches LIVE keys only,
 * with or without CLOSING, skips the rest and stops at FREE: a key lies within
 * FP_SLOT_PROBES slots of where its hash points, with no FREE slot between.
 */
enum {
	FP_SLOT_FREE = 0,
	FP_SLOT_RESERVED = 1,
	FP_SLOT_DELETED = 2,
	FP_SLOT_VACANT = 3,
	FP_SLOT_CLOSING = 0x40, /* with LIVE: set by the datapath on TCP FIN/RST: pass */
	FP_SLOT_LIVE = 0x80,
};

/* fp_flow_meta.flags: the daemon's translation (fixed while the entry lives) and the
 * datapath's next hop (FP_ENCAP_*, FP_NH_*, written with the rest of the next hop). */
enum {
	FP_FLOW_SNAT = 1 << 2, /* rewrite source address and port */
	FP_FLOW_DNAT = 1 << 3, /* rewrite destination address and port */
	FP_FLOW_MARK = 1 << 4, /* a conntrack mark, in fp_marks4/6 under the same key */
	FP_FLOW_DAEMON_MASK = FP_FLOW_SNAT | FP_FLOW_DNAT | FP_FLOW_MARK,
};

/*
 * The datapath clock (fp_clock_now) in units of 2^30 ns (1.07 s), as fp_flow_meta keeps the
 * time of a flow's last packet: 8 bits, which wrap every 274 s. Readers take the
 * difference to their own stamp of now, modulo 2^8 (fp_stamp_age_ns); the daemon reads
 * every entry's at each scan, far more often.
 */
#define FP_STAMP_SHIFT 30

/*
 * An IPv4 entry's state, after the counters (an IPv6 entry has the same in other places,
 * struct fp_flow6 and fp_nh_ctx). The next-hop part is a cache filled by the datapath from
 * bpf_fib_lookup(); it is valid only while nh_gen equals the low 16 bits of
 * fp_config.nh_gen, so a writer (the daemon) invalidates every cached next hop at once by
 * bumping the generation (and clears generations a wrap could bring back, every
 * FP_NH_GEN_TURN bumps, loader/flowmap.h). Userspace inserts entries with nh_gen 0
 * (unresolved), and then writes only a slot's state (to delete it) and a stale
 * generation (to 0): the counters, last_seen and the next hop belong to the datapath.
 */
struct fp_flow_meta {
	__u16 nh_gen;
	__u16 oif; /* egress port ifindex (<= FP_MAX_FLOW_IFINDEX) */
	__u16 mtu; /* egress L3 MTU, less any PPPoE header */
	__u8 dmac[6];
	__u8 smac[6];
	__be16 vlan_tci;  /* with FP_ENCAP_VLAN */
	__be16 pppoe_sid; /* with FP_ENCAP_PPPOE */
	__u8 last_seen;	  /* the clock at the last packet, in FP_STAMP_SHIFT units */
	__u8 flags;	  /* FP_FLOW_*, FP_ENCAP_* (the headers pushed below IP), FP_NH_* */
};

/*
 * A flow direction's entry: the counters (the datapath's alone; packets wrap at 2^32),
 * the next hop, the translation. 48 bytes, so that with its key it fills one cache line.
 */
struct fp_flow4 {
	__u64 bytes; /* L3 bytes, as conntrack counts them */
	__u32 packets;
	struct fp_flow_meta meta;
	__be32 nat_saddr; /* used with FP_FLOW_SNAT */
	__be16 nat_sport;
	__be16 nat_dport; /* used with FP_FLOW_DNAT */
	__be32 nat_daddr;
};

/*
 * fp_flows4 is an array of these, open addressing: a lookup reads one cache line where a
 * hash map's reads the bucket array, then an element of two lines, one after the other.
 * Half of the slots are kept free (fp_slots_for), 128 bytes per flow direction.
 */
struct fp_slot4 {
	struct fp_flow_key4 key;
	struct fp_flow4 flow;
};

/*
 * An IPv6 flow direction's entry: 24 bytes, so that with its 40-byte key it fills a
 * 64-byte slot (struct fp_slot6). What the IPv4 entry holds beside it lives elsewhere:
 * its next hop (MAC addresses, tags, MTU, port) in a table of next hops that the flows to
 * each neighbour share (fp_nh_ctx, by nh_ctx), the addresses and ports of a NAT66
 * translation in a side map (fp_nat6, under the same key). The next hop is valid while
 * nh_gen equals the low 8 bits of fp_config.nh_gen (the daemon clears older ones every
 * FP_NH_GEN_TURN generations, loader/flowmap.h).
 */
struct fp_flow6 {
	__u64 bytes;
	__u32 packets;
	__u16 nh_ctx;	/* fp_nh_ctx index */
	__u8 nh_gen;	/* 0: no next hop cached */
	__u8 last_seen; /* as fp_flow_meta's */
	__u8 flags;	/* FP_FLOW_* (the next hop's FP_ENCAP_* and FP_NH_* are fp_nh_ctx's) */
	__u8 pad[7];
};

/* fp_nat6: an IPv6 flow's translation (FP_FLOW_SNAT, FP_FLOW_DNAT), under the flow's key. */
struct fp_nat6 {
	__be32 nat_saddr[4];
	__be32 nat_daddr[4];
	__be16 nat_sport;
	__be16 nat_dport;
};

/*
 * fp_nh_ctx: the next hops of IPv6 flows, as an IPv4 entry's meta has one (nh_gen and
 * last_seen 0, flags only FP_ENCAP_* and FP_NH_*), written by the datapath as it resolves
 * them and never changed while in use: flows to the same neighbour share one. An array of
 * two halves of FP_NH_CTX_HALF; the generations of one turn (FP_NH_GEN_TURN) use one half
 * (fp_nh_ctx_half). When the daemon's bump starts a turn, no cached next hop is valid any
 * more, and after a grace period it empties the half the last turn used (its entries, and
 * their claims in fp_nh_ctx_claim, whose BPF_NOEXIST insert is how a program takes a free
 * entry: 5.10 has no compare-and-swap). A lookup compares the meta whole.
 */
struct fp_nh_ctx {
	struct fp_flow_meta meta;
	__u32 used; /* 1: written (last) */
	__u32 pad;
};

#define FP_NH_CTX_HALF	 512
#define FP_NH_CTX_PROBES 8   /* entries a program looks at for a next hop, from its hash's */
#define FP_NH_GEN_TURN	 128 /* generations a half is used for: 8-bit ones stay apart */

/* The half of fp_nh_ctx that next hops resolved in generation @gen use: 0 or 1. */
static inline __u32 fp_nh_ctx_half(__u32 gen)
{
	return (gen / FP_NH_GEN_TURN) & 1;
}

/* fp_flows6 is an array of these, as fp_flows4 is of fp_slot4: an IPv6 flow direction in
 * one 64-byte slot, its key (whose last byte is the state) and its entry. */
struct fp_slot6 {
	struct fp_flow_key6 key;
	struct fp_flow6 flow;
};

/* How far from its hash's slot a key may lie: the daemon inserts no farther, the datapath
 * looks no farther. At half load 3 keys in 4 lie in their hash's slot itself. */
#define FP_SLOT_PROBES 16

/* The slots of a table for @flows entries: a power of two, at least twice as many. */
static inline __u32 fp_slots_for(__u32 flows)
{
	__u32 slots = 64;

	while (slots < 2 * flows && slots < (1u << 30))
		slots <<= 1;
	return slots;
}

/*
 * A slot key as two 64-bit words in memory order (bytes 0-7, 8-15), whose second word
 * holds the state in its last byte: where that byte lies in the word, and the words of
 * two 32-bit halves in memory order.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FP_SLOT_STATE_SHIFT	  56
#define FP_WORDS64(first, second) ((__u64)(first) | (__u64)(second) << 32)
#else
#define FP_SLOT_STATE_SHIFT	  0
#define FP_WORDS64(first, second) ((__u64)(first) << 32 | (__u64)(second))
#endif
#define FP_SLOT_STATE_BITS(state) ((__u64)(state) << FP_SLOT_STATE_SHIFT)

/* The slot a key's hash points to, of a table of @mask + 1 slots; @w1 without its state.
 * The datapath and the daemon compute it alike (the same machine's byte order). */
static inline __u32 fp_slot_hash(__u64 w0, __u64 w1, __u32 mask)
{
	__u64 h = w0 * 0x9e3779b97f4a7c15ull;

	h ^= h >> 29;
	h += w1;
	h *= 0xbf58476d1ce4e5b9ull;
	return (__u32)(h >> 32) & mask;
}

/* The same for an IPv6 key as five 64-bit words in memory order, @w[4] without its state:
 * the two prefixes first, folded, as a router's flows share theirs. */
static inline __u32 fp_slot_hash6(const __u64 *w, __u32 mask)
{
	__u64 h = (w[0] ^ w[2] << 1) * 0x9e3779b97f4a7c15ull;

	h ^= h >> 29;
	h += w[1];
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	h += w[3];
	h *= 0x94d049bb133111ebull;
	h ^= h >> 29;
	h += w[4];
	h *= 0xbf58476d1ce4e5b9ull;
	return (__u32)(h >> 32) & mask;
}

/* fp_config.flags */
enum {
	/* Some attached interface is a bridge port: untagged frames look up fp_ingress too. */
	FP_CONFIG_BRIDGE_PORTS = 1 << 0,
	/* Some attached port has FP_PORT_TCP_TO_TC: TCP looks up fp_ports. */
	FP_CONFIG_TCP_TO_TC = 1 << 1,
	/* Some attached port has FP_PORT_PARTIAL_CSUM: XDP looks up fp_ports for a flow's
	 * packets. */
	FP_CONFIG_PARTIAL_CSUM = 1 << 2,
};

/* fp_ports: ifindex of an attached port -> FP_PORT_* flags, written by attach. */
enum {
	/* Native XDP and the tc hook both on the port (--mode auto, GRO on): XDP passes its
	 * TCP to the kernel, whose GRO makes aggregates that the tc hook forwards whole. */
	FP_PORT_TCP_TO_TC = 1 << 0,
	/* The XDP entry point runs there in generic mode (--mode generic): its frames are
	 * skbs, which it may redirect to a port that takes no XDP frames (FP_NH_SKB_ONLY). */
	FP_PORT_GENERIC = 1 << 1,
	/* Its frames may carry a partial TCP or UDP checksum, for the sender's device to
	 * finish (a tap: its guest's virtio NIC offloads checksums; virtio in generic mode):
	 * XDP passes those to the kernel, which finishes it on the way out. A redirected
	 * frame leaves unfinished. */
	FP_PORT_PARTIAL_CSUM = 1 << 2,
};

/*
 * What the running kernel offers, probed when the program is loaded (loader/kernel.c).
 * The program gets them as a constant (fp_kernel, read-only data), so each kernel's
 * verifier sees only the code for what that kernel has: one program for 5.10 to today.
 */
enum {
	FP_KERNEL_JIFFIES = 1 << 0,	 /* bpf_jiffies64(), Linux 5.5 */
	FP_KERNEL_FIB_MARK = 1 << 1,	 /* BPF_FIB_LOOKUP_MARK, Linux 6.10 */
	FP_KERNEL_XDP_FEATURES = 1 << 2, /* netdev netlink XDP features, Linux 6.3 (loader) */
	FP_KERNEL_FIB_MTU = 1 << 3,	 /* bpf_fib_lookup() answers the MTU, Linux 5.12 */
	FP_KERNEL_JIT_ATOMICS = 1 << 4,	 /* the JIT compiles 64-bit atomic adds (not arm32) */
};

/*
 * The datapath's clock, in nanoseconds of CLOCK_MONOTONIC: ns + (jiffies_64 - jiffies) *
 * tick_ns. The kernel advances jiffies by one every tick of CLOCK_MONOTONIC, and
 * bpf_jiffies64() is one load where the JIT inlines it (64-bit), where reading a
 * clocksource costs about 15 ns a packet. It lags CLOCK_MONOTONIC by up to a tick.
 * Calibrated by the loader, checked by the daemon at each scan (loader/clock.c).
 */
struct fp_clock {
	__u64 jiffies; /* a value of jiffies_64 ... */
	__u64 ns;      /* ... and the CLOCK_MONOTONIC time it took that value */
	__u64 tick_ns; /* the length of a tick; 0: no clock, read bpf_ktime_get_ns() */
};

/* The single entry of the fp_config array, written by userspace. */
struct fp_config {
	__u64 heartbeat_ns; /* CLOCK_MONOTONIC_COARSE of the daemon's last scan */
	__u64 lease_ns;	    /* heartbeat older than this: pass everything; 0 = no lease */
	__u32 nh_gen;	    /* current next-hop generation, never 0 in its low 8 bits */
	__u32 flags;	    /* FP_CONFIG_* */
	__u32 steer_cpus;   /* --steer: spread packets by flow over fp_steer[0..n-1]; 0 = off */
	__u32 kernel;	    /* FP_KERNEL_* the program was loaded with, for status */
	struct fp_clock clock;
};

/*
 * Layer 2 below the routed interfaces, kept by the daemon from rtnetlink (topology.c).
 * Routing and conntrack see the upper device: a bridge (br-lan), a VLAN device (eth0.7) or
 * a PPPoE session's ppp device (pppoe-wan). XDP runs on the Ethernet port below it.
 *
 * fp_ingress: (port, VLAN id, PPPoE session) of a received frame -> the upper device the
 * kernel would deliver it to, whose ifindex is the flow key's. An untagged frame on a port
 * with no entry belongs to the port itself; a tagged or PPPoE frame with no entry passes.
 */
struct fp_ingress_key {
	__u32 ifindex;	  /* the port XDP runs on */
	__u16 vlan_id;	  /* 802.1Q VLAN id, host order; 0: untagged */
	__be16 pppoe_sid; /* PPPoE session id; 0: not PPPoE */
};

struct fp_ingress {
	__u32 ifindex; /* the upper device */
	__u8 mac[6];   /* the upper device's address: only frames sent to it are routed */
	__u8 peer[6];  /* PPPoE: the access concentrator, the only valid source */
};

/* fp_egress.flags */
enum {
	FP_EGRESS_BRIDGE = 1 << 0, /* the port is the bridge's FDB entry for the next hop */
	FP_EGRESS_VLAN = 1 << 1,
	FP_EGRESS_PPPOE = 1 << 2,
	/* An attached port that cannot take redirected frames now (a veth whose peer lost
	 * GRO): flows leaving by it go to the kernel. Keyed by the port itself. */
	FP_EGRESS_NO_XMIT = 1 << 3,
};

/* fp_flow_meta.flags, beside FP_FLOW_* and FP_ENCAP_* */
enum {
	/* The egress cannot take redirected XDP frames now, but skbs: the tc entry point
	 * forwards, and so does the XDP entry point of a port in generic mode; that of a port
	 * in native mode passes. */
	FP_NH_SKB_ONLY = 1 << 7,
};

/* fp_flow_meta.flags: what the datapath pushes below IP on egress */
enum {
	FP_ENCAP_VLAN = 1 << 0,	 /* 802.1Q tag, 4 bytes */
	FP_ENCAP_PPPOE = 1 << 1, /* PPPoE session and PPP headers, 8 bytes */
	FP_ENCAP_MASK = FP_ENCAP_VLAN | FP_ENCAP_PPPOE,
	FP_NH_MASK = FP_ENCAP_MASK | FP_NH_SKB_ONLY, /* the datapath's bits of the flags */
};

#define FP_VLAN_HLEN  4
#define FP_PPPOE_HLEN 8 /* PPPoE session header (6) and PPP protocol (2) */

/*
 * fp_egress: upper device a route leaves through (bpf_fib_lookup's answer) -> how to reach
 * the wire. An upper device with no entry is a port itself.
 */
struct fp_egress {
	__u32 ifindex;	  /* the port to send on; 0 with FP_EGRESS_BRIDGE (from fp_fdb) */
	__u16 mtu;	  /* the port's MTU; 0: no further limit */
	__u16 flags;	  /* FP_EGRESS_* */
	__be16 vlan_tci;  /* FP_EGRESS_VLAN */
	__be16 pppoe_sid; /* FP_EGRESS_PPPOE */
	__u8 smac[6];	  /* FP_EGRESS_PPPOE: the port's address */
	__u8 dmac[6];	  /* FP_EGRESS_PPPOE: the access concentrator's */
};

/* fp_fdb: a bridge's forwarding database, for the bridges the fastpath serves. */
struct fp_fdb_key {
	__u32 bridge; /* ifindex */
	__u8 mac[6];
	__u16 pad;
};

/* Where a MAC was learnt: a port, or a VLAN device on a port (OpenWrt's swconfig layout,
 * br-lan over eth0.1), whose tag is pushed. */
struct fp_fdb_port {
	__u32 ifindex;	 /* the port to send on */
	__be16 vlan_tci; /* 0: untagged */
	__u16 pad;
};

/*
 * The single entry of fp_daemon: the sync daemon's own counters, written every scan so that
 * `xdp-fastpath status` and `bpftool map dump` can show them. The XDP program never reads it.
 */
/* fp_daemon_state.flags */
enum {
	FP_DAEMON_ALLOW_SHAPING = 1 << 0, /* --allow-shaping: shaped interfaces are offloaded */
	FP_DAEMON_UNAWAIT = 1 << 1,	  /* takes detach's requests to await a port no more */
};

struct fp_daemon_state {
	__u32 pid;
	__u32 flags;
	__u64 started_ns; /* CLOCK_MONOTONIC */
	__u64 scans;
	__u64 events;		/* conntrack events handled */
	__u64 overruns;		/* ENOBUFS on the event socket: events were lost */
	__u64 resyncs;		/* full dumps after an overrun or a flush */
	__u64 offloaded;	/* conntrack entries offloaded now */
	__u64 offload_total;	/* conntrack entries ever offloaded */
	__u64 remove_total;	/* conntrack entries removed from the fastpath */
	__u64 refresh_total;	/* conntrack timeouts refreshed */
	__u64 nh_bumps;		/* next-hop generation bumps */
	__u64 table_full;	/* entries that did not fit in the flow maps */
	__u64 errors;		/* netlink or map operations that failed */
	__u64 firewall_changes; /* nftables ruleset changes seen */
	__u64 fenced;		/* connections kept in the kernel since a firewall change */
	__u64 port_reads;	/* the ports' configuration read (links, FDBs, qdiscs...) */
};

/*
 * Per-CPU counters, one per outcome. X(enum suffix, name shown to users).
 * Every packet the program sees is counted in exactly one FP_STAT_PASS_* or in
 * FP_STAT_FORWARDED (FP_STAT_FORWARDED_BYTES adds its L3 length). FP_STAT_STEERED counts
 * packets handed to another CPU (--steer), which counts them again by their outcome. At the
 * tc hook a packet may be a GRO aggregate, counted once; FORWARDED_BYTES adds the L3 bytes
 * of the segments it leaves as, FORWARDED_GSO_SEGS their number.
 */
#define FP_STATS(X)                                                                                \
	X(FORWARDED, "forwarded")                                                                  \
	X(FORWARDED_BYTES, "forwarded_bytes")                                                      \
	X(FORWARDED_GSO, "forwarded_gso") /* of FORWARDED: GRO aggregates (tc hook) */             \
	X(FORWARDED_GSO_SEGS, "forwarded_gso_segments") /* the segments they are sent as */        \
	X(PASS_NOT_IP, "pass_not_ip")                                                              \
	X(PASS_VLAN, "pass_vlan")                                                                  \
	X(PASS_PPPOE, "pass_pppoe")                                                                \
	X(PASS_NOT_UNICAST, "pass_not_unicast")                                                    \
	X(PASS_OTHER_HOST, "pass_other_host")                                                      \
	X(PASS_MALFORMED, "pass_malformed")                                                        \
	X(PASS_IP_OPTIONS, "pass_ip_options")                                                      \
	X(PASS_FRAGMENT, "pass_fragment")                                                          \
	X(PASS_PROTO, "pass_proto")                                                                \
	X(PASS_TTL, "pass_ttl")                                                                    \
	X(PASS_TCP_FLAGS, "pass_tcp_flags")                                                        \
	X(PASS_HEARTBEAT, "pass_heartbeat")                                                        \
	X(PASS_NO_FLOW, "pass_no_flow")                                                            \
	X(PASS_CLOSING, "pass_closing")                                                            \
	X(PASS_NO_ROUTE, "pass_no_route")                                                          \
	X(PASS_NO_NEIGH, "pass_no_neigh")                                                          \
	X(PASS_NO_FIB_MARK,                                                                        \
	  "pass_no_fib_mark") /* a marked flow; the kernel's lookup has no mark */                 \
	X(PASS_NO_FDB, "pass_no_fdb")                                                              \
	X(PASS_EGRESS, "pass_egress_not_attached") /* or unable to take XDP frames now */          \
	X(PASS_MTU, "pass_mtu")                                                                    \
	X(PASS_NO_HEADROOM, "pass_no_headroom")                                                    \
	X(PASS_TCP_TO_TC, "pass_tcp_to_tc_hook")  /* left to GRO and the tc hook (auto) */         \
	X(PASS_PARTIAL_CSUM, "pass_partial_csum") /* FP_PORT_PARTIAL_CSUM */                       \
	X(PASS_NH_CTX, "pass_nh_context")	  /* IPv6: fp_nh_ctx full, or being written */     \
	X(STEERED, "steered")

#define FP_STAT_ENUM(id, name) FP_STAT_##id,
enum fp_stat { FP_STATS(FP_STAT_ENUM) FP_STAT_MAX };
#undef FP_STAT_ENUM

/* fp_stats' one entry, of each CPU: FP_STAT_* in that order. */
struct fp_stats {
	__u64 count[FP_STAT_MAX];
};

#ifndef __bpf__
#define FP_STAT_NAME(id, name) [FP_STAT_##id] = name,
static const char *const fp_stat_names[FP_STAT_MAX] = {FP_STATS(FP_STAT_NAME)};
#undef FP_STAT_NAME

/* Counter @stat summed over fp_stats' entry as a lookup returns it, one per possible CPU. */
static inline __u64 fp_stat_total(const struct fp_stats *percpu, int nr_cpus, enum fp_stat stat)
{
	__u64 total = 0;

	for (int c = 0; c < nr_cpus; c++)
		total += percpu[c].count[stat];
	return total;
}

/* How long before @now_ns (the datapath's clock) a flow's last_seen @stamp was taken, to a
 * stamp's precision; ages of 274 s and more wrap round. */
static inline __u64 fp_stamp_age_ns(__u64 now_ns, __u8 stamp)
{
	return (__u64)(__u8)((now_ns >> FP_STAMP_SHIFT) - stamp) << FP_STAMP_SHIFT;
}

/* The next-hop generation after @gen: IPv6 entries keep its low 8 bits, never 0 there. */
static inline __u32 fp_nh_gen_next(__u32 gen)
{
	gen++;
	if (!(__u8)gen)
		gen++;
	return gen;
}
#endif

_Static_assert(sizeof(struct fp_flow_key4) == 16, "fp_flow_key4 layout");
_Static_assert(sizeof(struct fp_flow_key6) == 40, "fp_flow_key6 layout");
/* The datapath writes keys a 32-bit word at a time: addresses, ports, then the rest. */
_Static_assert(__builtin_offsetof(struct fp_flow_key4, sport) == 8 &&
		       __builtin_offsetof(struct fp_flow_key4, ifindex) == 12 &&
		       __builtin_offsetof(struct fp_flow_key6, sport) == 32 &&
		       __builtin_offsetof(struct fp_flow_key6, ifindex) == 36,
	       "flow keys by the word");
_Static_assert(sizeof(struct fp_flow_meta) == 24, "fp_flow_meta layout");
_Static_assert(sizeof(struct fp_flow4) == 48, "fp_flow4 layout");
_Static_assert(sizeof(struct fp_slot4) == 64, "fp_slot4 layout: one cache line");
_Static_assert(sizeof(struct fp_slot6) == 64, "fp_slot6 layout: one cache line");
_Static_assert(__builtin_offsetof(struct fp_slot6, flow.bytes) % 8 == 0, "atomic counter");
_Static_assert(__builtin_offsetof(struct fp_slot4, flow.bytes) % 8 == 0, "atomic counter");
_Static_assert(sizeof(struct fp_flow6) == 24, "fp_flow6 layout");
_Static_assert(sizeof(struct fp_nat6) == 36, "fp_nat6 layout");
_Static_assert(sizeof(struct fp_nh_ctx) == 32, "fp_nh_ctx layout");
_Static_assert(sizeof(struct fp_ingress_key) == 8, "fp_ingress_key layout");
_Static_assert(sizeof(struct fp_ingress) == 16, "fp_ingress layout");
_Static_assert(sizeof(struct fp_egress) == 24, "fp_egress layout");
_Static_assert(sizeof(struct fp_fdb_key) == 12, "fp_fdb_key layout");
_Static_assert(sizeof(struct fp_fdb_port) == 8, "fp_fdb_port layout");
_Static_assert(sizeof(struct fp_clock) == 24, "fp_clock layout");
_Static_assert(sizeof(struct fp_config) == 56, "fp_config layout");
_Static_assert(sizeof(struct fp_daemon_state) == 128, "fp_daemon_state layout");

#endif /* XDP_FASTPATH_H */
