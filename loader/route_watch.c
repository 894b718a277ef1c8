// SPDX-License-Identifier: GPL-2.0-only
/*
 * rtnetlink for the daemon: route lookups (which interface a connection's direction arrives
 * on), and a watcher of links, addresses, routes and neighbours. Any such change may change a
 * next hop, so the daemon then bumps the next-hop generation and every cached next hop in the
 * flow maps is looked up again by its flow's next packet. The watcher also tells the daemon
 * when the ports' configuration may have changed otherwise (qdiscs; links in other
 * namespaces, where veth peers are), so that it reads that again then and not at each scan.
 *
 * Lookups are cached per address: a router's connections come from few networks, and a
 * new connection should not wait for two netlink round trips. The cache is flushed by
 * every change the watcher sees, as the next hops in the flow maps are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "route_watch.h"

#define RT_BUF_SIZE (MNL_SOCKET_BUFFER_SIZE * 8)

/*
 * A veth's peer lives in another namespace as often as not, and its link events (a change
 * of its checksum offload or GRO) are sent there: a socket that listens to every namespace
 * this one has an id for (NETLINK_LISTEN_ALL_NSID, 4.2) hears them, marked with that id.
 * NULL if it cannot: the daemon then reads the ports' configuration at every scan.
 */
static struct mnl_socket *open_peer_watch(void)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	int one = 1;

	if (nl && !mnl_socket_setsockopt(nl, NETLINK_LISTEN_ALL_NSID, &one, sizeof(one)) &&
	    !mnl_socket_bind(nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID))
		return nl;
	fp_log(LOG_INFO,
	       "cannot hear other namespaces' links (%s): the ports' configuration is read at "
	       "every scan",
	       strerror(errno));
	if (nl)
		mnl_socket_close(nl);
	return NULL;
}

int route_open(struct fp_route *rt)
{
	unsigned int groups = RTMGRP_LINK | RTMGRP_NEIGH | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR |
			      RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE | RTMGRP_TC;
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
	rt->peers = open_peer_watch();
	return 0;
}

void route_close(struct fp_route *rt)
{
	if (rt->lookup)
		mnl_socket_close(rt->lookup);
	if (rt->watch)
		mnl_socket_close(rt->watch);
	if (rt->peers)
		mnl_socket_close(rt->peers);
	free(rt->buf);
	free(rt->cache);
	memset(rt, 0, sizeof(*rt));
}

int route_watch_fd(const struct fp_route *rt)
{
	return mnl_socket_get_fd(rt->watch);
}

int route_peer_watch_fd(const struct fp_route *rt)
{
	return rt->peers ? mnl_socket_get_fd(rt->peers) : -1;
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

/* A link message's IFLA_IFNAME into @name, or "". */
static void link_name(const struct nlmsghdr *nlh, char name[FP_LINK_NAME_LEN])
{
	const struct nlattr *attr;

	name[0] = '\0';
	mnl_attr_for_each(attr, nlh, sizeof(struct ifinfomsg))
	{
		if (mnl_attr_get_type(attr) == IFLA_IFNAME &&
		    !mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) &&
		    mnl_attr_get_payload_len(attr) <= FP_LINK_NAME_LEN)
			snprintf(name, FP_LINK_NAME_LEN, "%s", mnl_attr_get_str(attr));
	}
}

static int watch_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fp_route_changes *changes = data;

	switch (nlh->nlmsg_type) {
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
		int n = changes->nr_deleted;

		if (mnl_nlmsg_get_payload_len(nlh) >= sizeof(*ifi) &&
		    n < (int)(sizeof(changes->deleted) / sizeof(changes->deleted[0]))) {
			changes->deleted[n] = ifi->ifi_index;
			link_name(nlh, changes->deleted_names[n]);
			changes->nr_deleted++;
		}
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
	case RTM_NEWQDISC: /* a shaper may hold a port's connections in the kernel */
	case RTM_DELQDISC:
		changes->ports_changed = true;
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

/* Whether the message in @msg came from another namespace: it names the namespace's id. */
static bool from_other_namespace(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c))
		if (c->cmsg_level == SOL_NETLINK && c->cmsg_type == NETLINK_LISTEN_ALL_NSID)
			return true;
	return false;
}

/* Drains the peer watcher: whether a link changed in another namespace (or events were
 * lost, which may have been such). Its own namespace's links are route_watch_parse's. */
static bool read_peer_watch(struct fp_route *rt)
{
	char control[CMSG_SPACE(sizeof(int))];
	bool changed = false;

	for (;;) {
		struct iovec iov = {.iov_base = rt->buf, .iov_len = RT_BUF_SIZE};
		struct msghdr msg = {.msg_iov = &iov,
				     .msg_iovlen = 1,
				     .msg_control = control,
				     .msg_controllen = sizeof(control)};
		ssize_t n = recvmsg(mnl_socket_get_fd(rt->peers), &msg, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return changed || errno == ENOBUFS;
		changed |= from_other_namespace(&msg);
	}
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
			break; /* EAGAIN: drained */
		}
		route_watch_parse(rt, rt->buf, n, changes);
	}
	changes->ports_changed |= changes->l2_changed;
	if (rt->peers && read_peer_watch(rt))
		changes->ports_changed = true;
}
