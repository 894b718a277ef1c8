// SPDX-License-Identifier: GPL-2.0-only
/*
 * rtnetlink for the daemon: route lookups (which interface a connection's direction arrives
 * on), and a watcher of links, addresses, routes and neighbours. Any such change may change a
 * next hop, so the daemon then bumps the next-hop generation and every cached next hop in the
 * flow maps is looked up again by its flow's next packet.
 *
 * Lookups are cached per address: a router's connections come from few networks, and a
 * new connection should not wait for two netlink round trips. The cache is flushed by
 * every change the watcher sees, as the next hops in the flow maps are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "route_watch.h"

#define RT_BUF_SIZE (MNL_SOCKET_BUFFER_SIZE * 8)

int route_open(struct fp_route *rt)
{
	unsigned int groups = RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
			      RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
	int rcvbuf = 4 << 20;

	memset(rt, 0, sizeof(*rt));
	rt->buf = malloc(RT_BUF_SIZE);
	rt->cache = calloc(FP_ROUTE_CACHE_SIZE, sizeof(*rt->cache));
	rt->lookup = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	rt->watch = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!rt->buf || !rt->cache || !rt->lookup || !rt->watch ||
	    mnl_socket_bind(rt->lookup, 0, MNL_SOCKET_AUTOPID) ||
	    mnl_socket_bind(rt->watch, groups, MNL_SOCKET_AUTOPID)) {
		fp_err("cannot open rtnetlink sockets: %s", strerror(errno));
		route_close(rt);
		return -errno;
	}
	setsockopt(mnl_socket_get_fd(rt->watch), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		   sizeof(rcvbuf));
	fcntl(mnl_socket_get_fd(rt->watch), F_SETFL, O_NONBLOCK);
	return 0;
}

void route_close(struct fp_route *rt)
{
	if (rt->lookup)
		mnl_socket_close(rt->lookup);
	if (rt->watch)
		mnl_socket_close(rt->watch);
	free(rt->buf);
	free(rt->cache);
	memset(rt, 0, sizeof(*rt));
}

int route_watch_fd(const struct fp_route *rt)
{
	return mnl_socket_get_fd(rt->watch);
}

static int route_attr_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == RTA_OIF && mnl_attr_validate(attr, MNL_TYPE_U32) >= 0)
		*(int *)data = (int)mnl_attr_get_u32(attr);
	return MNL_CB_OK;
}

static int route_reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	if (nlh->nlmsg_type != RTM_NEWROUTE || mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	if (rtm->rtm_type == RTN_LOCAL) {
		*(int *)data = 0; /* an address of the router's own */
		return MNL_CB_OK;
	}
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, data);
	return MNL_CB_OK;
}

void route_cache_flush(struct fp_route *rt)
{
	memset(rt->cache, 0, FP_ROUTE_CACHE_SIZE * sizeof(*rt->cache));
}

static struct fp_route_cached *cache_slot(struct fp_route *rt, int family, const uint32_t *addr,
					  uint32_t mark)
{
	uint32_t h = family ^ mark * 0x85ebca6bu;

	for (int i = 0; i < (family == AF_INET ? 1 : 4); i++)
		h = (h ^ addr[i]) * 0x9e3779b1u;
	return &rt->cache[(h >> 16) & (FP_ROUTE_CACHE_SIZE - 1)];
}

static int route_lookup(struct fp_route *rt, int family, const uint32_t *addr, uint32_t mark)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;
	int oif = -1, err;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_seq = ++rt->seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = family;
	rtm->rtm_dst_len = family == AF_INET ? 32 : 128;
	mnl_attr_put(nlh, RTA_DST, family == AF_INET ? 4 : 16, addr);
	if (mark)
		mnl_attr_put_u32(nlh, RTA_MARK, mark);
	/* One answer: the route, or an error (no route). One without an output interface
	 * (a blackhole, say) leaves oif at -1; a local one makes it 0. */
	err = fp_nl_ask(rt->lookup, nlh, rt->buf, RT_BUF_SIZE, route_reply_cb, &oif);
	return err ? err : oif;
}

int route_oif(struct fp_route *rt, int family, const uint32_t *addr, uint32_t mark)
{
	struct fp_route_cached *slot = cache_slot(rt, family, addr, mark);
	size_t len = family == AF_INET ? 4 : 16;
	int oif;

	rt->lookups++;
	if (slot->family == family && slot->mark == mark && !memcmp(slot->addr, addr, len)) {
		rt->cache_hits++;
		return slot->oif;
	}
	oif = route_lookup(rt, family, addr, mark);
	if (oif >= 0) {
		slot->family = family;
		slot->mark = mark;
		memset(slot->addr, 0, sizeof(slot->addr));
		memcpy(slot->addr, addr, len);
		slot->oif = oif;
	}
	return oif;
}

static int watch_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fp_route_changes *changes = data;

	switch (nlh->nlmsg_type) {
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

		if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(*ifi) &&
		    changes->nr_deleted <
			    (int)(sizeof(changes->deleted) / sizeof(changes->deleted[0])))
			changes->deleted[changes->nr_deleted++] = ifi->ifi_index;
		changes->nexthops_changed = changes->l2_changed = true;
		break;
	}
	case RTM_NEWLINK:
		changes->nexthops_changed = changes->l2_changed = true;
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH: {
		const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);

		/* A bridge's FDB entry, or one too short to tell: assume it is one. */
		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ndm) || ndm->ndm_family == AF_BRIDGE)
			changes->l2_changed = true;
		changes->nexthops_changed = true;
		break;
	}
	case RTM_NEWADDR:
	case RTM_DELADDR:
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		changes->nexthops_changed = true;
		break;
	}
	return MNL_CB_OK;
}

void route_watch_parse(struct fp_route *rt, const void *buf, size_t len,
		       struct fp_route_changes *changes)
{
	if (fp_nlmsg_stream_ok(buf, len))
		mnl_cb_run(buf, len, 0, 0, watch_cb, changes);
	else
		changes->nexthops_changed = changes->l2_changed = true; /* unreadable: the worst */
	if (changes->nexthops_changed)
		route_cache_flush(rt);
}

void route_watch_read(struct fp_route *rt, struct fp_route_changes *changes)
{
	memset(changes, 0, sizeof(*changes));
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(rt->watch, rt->buf, RT_BUF_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				/* lost some: assume the worst */
				changes->nexthops_changed = changes->l2_changed = true;
				route_cache_flush(rt);
				continue;
			}
			return; /* EAGAIN: drained */
		}
		route_watch_parse(rt, rt->buf, n, changes);
	}
}
