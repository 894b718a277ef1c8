/* SPDX-License-Identifier: GPL-2.0-only */
/* rtnetlink: route lookups, and the watcher that keeps cached next hops honest. */
#ifndef FP_ROUTE_WATCH_H
#define FP_ROUTE_WATCH_H

#include <stdint.h>

#include "common.h"

struct mnl_socket;

struct fp_route {
	struct mnl_socket *lookup; /* RTM_GETROUTE requests */
	struct mnl_socket *watch;  /* link, address, route and neighbour events */
	uint32_t seq;
	char *buf;
};

int route_open(struct fp_route *rt);
void route_close(struct fp_route *rt);
int route_watch_fd(const struct fp_route *rt);
/* The interface a packet to addr leaves through: where a packet from addr arrives. */
int route_oif(struct fp_route *rt, int family, const uint32_t *addr);

/* What the watcher saw in the messages read by route_watch_read(). */
struct fp_route_changes {
	bool nexthops_changed; /* routes, neighbours, addresses or links changed */
	uint32_t deleted[16];  /* ifindexes of deleted links */
	int nr_deleted;
};
void route_watch_read(struct fp_route *rt, struct fp_route_changes *changes);

#endif
