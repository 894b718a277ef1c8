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

/* Map names, as seen by bpftool and as pinned under the pin directory. */
#define FP_MAP_FLOWS4	"fp_flows4"
#define FP_MAP_FLOWS6	"fp_flows6"
#define FP_MAP_STATS	"fp_stats"
#define FP_MAP_CONFIG	"fp_config"
#define FP_MAP_TX_PORTS "fp_tx_ports"
#define FP_MAP_DAEMON	"fp_daemon"
#define FP_PROG_NAME	"xdp_fastpath"

#define FP_DEFAULT_FLOWS    65536 /* per family, set at load time */
#define FP_MAX_TX_PORTS	    64	  /* interfaces the fastpath may redirect to */
#define FP_DEFAULT_PIN_ROOT "/sys/fs/bpf/xdp-fastpath"

/*
 * Flow key: one entry per direction of a connection. The ingress interface is part of the
 * key, so a packet with a flow's tuple arriving on another interface never matches.
 * Keys must be zeroed before filling: the padding is hashed too.
 */
struct fp_flow_key4 {
	__u32 ifindex; /* ingress */
	__be32 saddr;
	__be32 daddr;
	__be16 sport;
	__be16 dport;
	__u8 proto; /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 pad[3];
};

struct fp_flow_key6 {
	__u32 ifindex; /* ingress */
	__be32 saddr[4];
	__be32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 pad[3];
};

/* fp_flow_meta.flags */
enum {
	FP_FLOW_SNAT = 1 << 0,	  /* rewrite source address and port */
	FP_FLOW_DNAT = 1 << 1,	  /* rewrite destination address and port */
	FP_FLOW_CLOSING = 1 << 2, /* set by the datapath on TCP FIN/RST: pass from now on */
};

/*
 * State common to both families. The next-hop part is a cache filled by the datapath from
 * bpf_fib_lookup(); it is valid only while nh_gen equals fp_config.nh_gen, so a writer
 * (the daemon) invalidates every cached next hop at once by bumping the generation.
 * Userspace inserts entries with nh_gen 0 (unresolved) and never updates them in place:
 * counters belong to the datapath.
 */
struct fp_flow_meta {
	__u64 last_seen_ns; /* CLOCK_MONOTONIC_COARSE of the last packet */
	__u64 packets;
	__u64 bytes; /* L3 bytes, as conntrack counts them */
	__u32 oif;   /* egress ifindex */
	__u32 nh_gen;
	__u8 dmac[6];
	__u8 smac[6];
	__u16 mtu; /* egress L3 MTU */
	__u16 flags;
};

struct fp_flow4 {
	struct fp_flow_meta meta;
	__be32 nat_saddr; /* used with FP_FLOW_SNAT */
	__be16 nat_sport;
	__be16 nat_dport; /* used with FP_FLOW_DNAT */
	__be32 nat_daddr;
	__u32 mark; /* conntrack mark: the next-hop lookup's fwmark (policy routing) */
};

struct fp_flow6 {
	struct fp_flow_meta meta;
	__be32 nat_saddr[4];
	__be32 nat_daddr[4];
	__be16 nat_sport;
	__be16 nat_dport;
	__u32 mark; /* as in fp_flow4 */
};

/* The single entry of the fp_config array, written by userspace. */
struct fp_config {
	__u64 heartbeat_ns; /* CLOCK_MONOTONIC_COARSE of the daemon's last scan */
	__u64 lease_ns;	    /* heartbeat older than this: pass everything; 0 = no lease */
	__u32 nh_gen;	    /* current next-hop generation, never 0 */
	__u32 pad;
};

/*
 * The single entry of fp_daemon: the sync daemon's own counters, written every scan so that
 * `xdp-fastpath status` and `bpftool map dump` can show them. The XDP program never reads it.
 */
/* fp_daemon_state.flags */
enum {
	FP_DAEMON_ALLOW_SHAPING = 1 << 0, /* --allow-shaping: shaped interfaces are offloaded */
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
};

/*
 * Per-CPU counters, one per outcome. X(enum suffix, name shown to users).
 * Every packet the program sees is counted in exactly one FP_STAT_PASS_* or in
 * FP_STAT_FORWARDED (FP_STAT_FORWARDED_BYTES adds its L3 length).
 */
#define FP_STATS(X)                                                                                \
	X(FORWARDED, "forwarded")                                                                  \
	X(FORWARDED_BYTES, "forwarded_bytes")                                                      \
	X(PASS_NOT_IP, "pass_not_ip")                                                              \
	X(PASS_VLAN, "pass_vlan")                                                                  \
	X(PASS_NOT_UNICAST, "pass_not_unicast")                                                    \
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
	X(PASS_EGRESS, "pass_egress_not_attached")                                                 \
	X(PASS_MTU, "pass_mtu")

#define FP_STAT_ENUM(id, name) FP_STAT_##id,
enum fp_stat { FP_STATS(FP_STAT_ENUM) FP_STAT_MAX };
#undef FP_STAT_ENUM

#ifndef __bpf__
#define FP_STAT_NAME(id, name) [FP_STAT_##id] = name,
static const char *const fp_stat_names[FP_STAT_MAX] = {FP_STATS(FP_STAT_NAME)};
#undef FP_STAT_NAME
#endif

_Static_assert(sizeof(struct fp_flow_key4) == 20, "fp_flow_key4 layout");
_Static_assert(sizeof(struct fp_flow_key6) == 44, "fp_flow_key6 layout");
_Static_assert(sizeof(struct fp_flow_meta) == 48, "fp_flow_meta layout");
_Static_assert(sizeof(struct fp_flow4) == 64, "fp_flow4 layout");
_Static_assert(sizeof(struct fp_flow6) == 88, "fp_flow6 layout");
_Static_assert(sizeof(struct fp_config) == 24, "fp_config layout");
_Static_assert(sizeof(struct fp_daemon_state) == 120, "fp_daemon_state layout");

#endif /* XDP_FASTPATH_H */
