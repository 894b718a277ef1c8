/* SPDX-License-Identifier: GPL-2.0-only */
/* rtnetlink: route lookups, and the watcher that keeps cached next hops honest. */
#ifndef FP_ROUTE_WATCH_H
#define FP_ROUTE_WATCH_H

#include <stdint.h>

#include "common.h"

struct mnl_socket;

#define FP_ROUTE_CACHE_SIZE 4096 /* a power of two */

/* A remembered lookup: address -> interface. Flushed on every rtnetlink change. */
struct fp_route_cached {
	uint8_t family; /* 0: empty */
	uint32_t addr[4];
	uint32_t mark;
	int oif;
};

struct fp_route {
	struct mnl_socket *lookup; /* RTM_GETROUTE requests */
	struct mnl_socket *watch;  /* link, address, route, neighbour and qdisc events */
	struct mnl_socket *peers;  /* link events of other namespaces (veth peers'), or NULL */
	uint32_t seq;
	char *buf;
	struct fp_route_cached *cache;
	uint64_t lookups, cache_hits;
};

int route_open(struct fp_route *rt);
void route_close(struct fp_route *rt);
int route_watch_fd(const struct fp_route *rt);
/* The peer watcher's, or -1 without one (route_watch_read reads both). */
int route_peer_watch_fd(const struct fp_route *rt);
/*
 * The interface a packet to addr with fwmark mark leaves through: where a packet of the
 * same connection from addr arrives (policy routing by mark included). 0 for an address
 * of the router's own (a local route), -1 for a route without an interface, or -errno.
 */
int route_oif(struct fp_route *rt, int family, const uint32_t *addr, uint32_t mark);
/* Forgets every cached lookup (route_watch_read does it on any change it sees). */
void route_cache_flush(struct fp_route *rt);

/* What the watcher saw in the messages read by route_watch_read(). */
/* IF_NAMESIZE, without <net/if.h>, which <linux/if.h> users cannot include */
#define FP_LINK_NAME_LEN 16

struct fp_route_changes {
	bool nexthops_changed; /* routes, neighbours, addresses or links changed */
	bool l2_changed;       /* links or bridge FDB entries: the topology (topology.c) */
	bool ports_changed;    /* those, qdiscs, or links in other namespaces: the ports'
				* configuration (ports.c) may have changed */
	uint32_t deleted[16];  /* ifindexes of deleted links */
	char deleted_names[16][FP_LINK_NAME_LEN]; /* and their names ("" if none given) */
	int nr_deleted;
};
void route_watch_read(struct fp_route *rt, struct fp_route_changes *changes);
/* Adds what the rtnetlink messages in buf change to changes (route_watch_read's parser). */
void route_watch_parse(struct fp_route *rt, const void *buf, size_t len,
		       struct fp_route_changes *changes);

#endif
