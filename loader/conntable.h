/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's table of offloaded connections: one record per conntrack entry, reachable
 * by the tuple of either direction (events name the original tuple, flow map entries the
 * tuple of their own direction).
 */
#ifndef FP_CONNTABLE_H
#define FP_CONNTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A direction's tuple, as the rest of the daemon handles it. */
struct fp_tuple {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t proto;
	uint16_t pad;
	uint32_t src[4]; /* network order; IPv4 uses [0] */
	uint32_t dst[4];
	uint16_t sport; /* network order */
	uint16_t dport;
};

enum { FP_DIR_ORIG, FP_DIR_REPLY };

/*
 * A record, compact because a router keeps tens of thousands: the tuples are stored at
 * their family's size (conn_tuple() expands one), times in seconds. A chain link names a
 * record and the direction whose chain continues there (the low bit of the pointer).
 * 72 bytes for IPv4 (80 with malloc's header), 120 for IPv6; 8 less on 32-bit routers.
 */
struct fp_conn {
	uintptr_t next[2];	 /* the chains of the two tuples' buckets */
	uint32_t ingress[2];	 /* ifindex each direction arrives on; 0: not offloaded */
	uint32_t gen;		 /* the dump generation that last saw it */
	uint32_t mark;		 /* conntrack mark, the flows' fwmark for next-hop lookups */
	uint32_t last_active_s;	 /* last packet the datapath forwarded (monotonic seconds) */
	uint32_t last_refresh_s; /* conntrack timeout last refreshed */
	uint16_t sport[2];	 /* per direction, network order */
	uint16_t dport[2];
	uint8_t family, proto;
	uint8_t doomed : 1; /* to be removed after the current walk */
	uint8_t polled : 1; /* sends no events: checked with GETs (see ctsync_scan) */
	uint8_t fenced : 1; /* in the kernel since a firewall change (ctsync_fence_all) */
	/* The low byte of each flow entry's last_seen at the last scan: it changes only when
	 * the datapath forwards a packet (a packet exactly 256 stamps, 4.6 min, after the one
	 * before goes unseen, as if the flow had been idle until its next packet). */
	uint8_t seen_stamp[2];
	uint16_t poll_slot; /* spreads the polled records over scans (modulo their stride) */
	uint32_t addr[];    /* src and dst of the original, then of the reply direction */
};

_Static_assert(sizeof(struct fp_conn) == 2 * sizeof(uintptr_t) + 40,
	       "fp_conn: no padding before the addresses");

struct fp_conntable {
	uintptr_t *buckets;
	size_t nr_buckets; /* a power of two */
	size_t count;
	uint64_t seed;
};

int conntable_init(struct fp_conntable *t);
void conntable_free(struct fp_conntable *t);
/* The record with this tuple in either direction; *dir says which. */
struct fp_conn *conntable_find(const struct fp_conntable *t, const struct fp_tuple *tuple,
			       int *dir);
/* The addresses of the two tuples (of one family) as a record keeps them in addr[]: 4 of
 * 1 word for IPv4, of 4 for IPv6. */
void conntable_pack_addrs(uint32_t *addr, const struct fp_tuple *orig,
			  const struct fp_tuple *reply);
/* A new record for the two tuples (of one family). */
struct fp_conn *conntable_add(struct fp_conntable *t, const struct fp_tuple *orig,
			      const struct fp_tuple *reply);
void conntable_remove(struct fp_conntable *t, struct fp_conn *c);
/* Calls fn for every record; fn may not add or remove records (mark them doomed). */
void conntable_walk(const struct fp_conntable *t, void (*fn)(struct fp_conn *c, void *arg),
		    void *arg);
/* Removes the doomed records, calling fn before each removal. Returns how many. */
size_t conntable_reap(struct fp_conntable *t, void (*fn)(struct fp_conn *c, void *arg), void *arg);
/* The tuple of direction dir. */
void conn_tuple(const struct fp_conn *c, int dir, struct fp_tuple *t);
/* Whether direction dir's tuple is @t. */
bool conn_has_tuple(const struct fp_conn *c, int dir, const struct fp_tuple *t);

#endif
