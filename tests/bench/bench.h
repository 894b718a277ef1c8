/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by the benchmark's XDP programs and fp-bench. */
#ifndef FP_BENCH_H
#define FP_BENCH_H

#include <linux/types.h>

/* Flow i: source port BASE + i % PER_DPORT, destination port DPORT_BASE + i / PER_DPORT,
 * so that even 1M flows masquerade without running out of ports. */
#define BENCH_SPORT_BASE      1024
#define BENCH_PORTS_PER_DPORT 60000
#define BENCH_DPORT_BASE      10000

struct bench_cfg {
	__u8 dmac[6];
	__u8 smac[6];
	__be32 saddr;
	__be32 daddr;
	__u32 nr_flows;
	__u16 dport_base; /* 0: BENCH_DPORT_BASE */
	__u16 ipv6;	  /* generator: IPv6 frames, saddr6 to daddr6 (saddr, daddr unused) */
	__u32 pass;    /* sink: count frames and pass them to the stack (an echo server answers,
			* establishing the flows) instead of dropping them */
	__u32 seq_len; /* generator: 0 cycles over the flows; else it sends the flows of
			* bench_seq[0..seq_len) in turn (a mix of fp-bench's making) */
	__u8 saddr6[16];
	__u8 daddr6[16];
};

/* Packets in a generated mix (bench_seq): 8 MB of flow numbers, replayed in a loop. */
#define BENCH_SEQ_MAX (1u << 21)

#endif
