/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The interfaces the daemon offloads through: the attached ports, the upper devices above
 * them, and which of those keep their connections in the kernel, and why (ports.c).
 */
#ifndef FP_PORTS_H
#define FP_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "topology.h"

#define FP_MAX_IFACES (FP_MAX_TX_PORTS + FP_MAX_L2_IFACES)

/* Why an interface's connections stay in the kernel. */
enum {
	FP_HELD_SHAPER = 1 << 0,	/* offloaded flows would bypass its shaping qdisc */
	FP_HELD_PEER_CHECKSUM = 1 << 1, /* a veth whose peer hands over partial checksums */
};

struct fp_ports {
	const struct fp_instance *inst;
	struct fp_topology *topo; /* NULL: plain ports only */
	bool allow_shaping;	  /* --allow-shaping: a shaper holds nothing */
	__u64 *errors;		  /* counts failed topology syncs */
	__u64 *reads;		  /* counts ports_read() */
	/* The interfaces flows may be keyed by, as last read: the attached ports, then the
	 * upper devices above them (bridges, VLANs, PPPoE) the topology serves. */
	uint32_t keyed[FP_MAX_IFACES];
	int nr_keyed, nr_attached;
	uint64_t read_ns;      /* the attached ports last listed */
	uint64_t full_read_ns; /* everything last read (ports_read) */
	bool stale;	       /* an event said the configuration may have changed since */
	bool changed;			 /* the list changed since ports_take_changed() */
	bool topology_changed;		 /* the layer-2 maps changed: cached next hops are stale */
	bool released;			 /* a hold ended since ports_take_released() */
	uint32_t held[FP_MAX_IFACES];	 /* those whose connections stay in the kernel */
	uint8_t held_why[FP_MAX_IFACES]; /* FP_HELD_* */
	int nr_held;
};

/*
 * Reads the attached ports, syncs the topology above them, and which hold their
 * connections in the kernel: before each dump, after each link or bridge FDB change, and
 * at a scan when ports_due() says so.
 */
void ports_read(struct fp_ports *p);
/*
 * At each scan: lists the attached ports again (another process may have detached one),
 * and says whether the rest is to be read again: the list changed, an event marked it
 * stale (a qdisc, a veth peer's link), or it was last read PORTS_RECHECK_NS ago.
 */
bool ports_due(struct fp_ports *p, uint64_t now_ns);
/* Whether flows may be keyed by ifindex, as of the last read. */
bool ports_keyed(const struct fp_ports *p, uint32_t ifindex);
/* The same, reading the ports again when they may have changed since (see ports.c). */
bool ports_keyed_now(struct fp_ports *p, uint32_t ifindex);
/* The FP_HELD_* reasons why ifindex's connections stay in the kernel, or 0. */
uint8_t ports_held(const struct fp_ports *p, uint32_t ifindex);
/* Each returns its flag and clears it. */
bool ports_take_changed(struct fp_ports *p);
bool ports_take_topology_changed(struct fp_ports *p);
bool ports_take_released(struct fp_ports *p);

#endif
