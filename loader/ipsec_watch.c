// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IPsec watch. A policy-based IPsec tunnel (strongSwan, libreswan: a site-to-site VPN
 * between two offices' subnets, or road warriors' virtual addresses) leaves the route as it
 * is: the kernel finds the policy on the way out, past routing, and encrypts. The datapath
 * knows routes only (bpf_fib_lookup), so it would send such a connection's packets out in
 * the clear, where the far end drops them: a black hole, and a leak. Nor would packets
 * coming in meet the policy check that they arrived through the tunnel.
 *
 * So the daemon keeps the kernel's IPsec policies in view (a dump, then XFRMNLGRP_POLICY's
 * notifications) and offloads no connection one of them may take: one address of it in
 * the selector's source prefix and one in its destination prefix, whatever the ports and
 * the protocol (conntrack_sync.c). A change withdraws what the policies now take, and a
 * dump offloads what they no longer take. Route-based tunnels (WireGuard, xfrm interfaces)
 * are routes, through a device of their own: the datapath hands those packets to it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/xfrm.h>

#include "common.h"
#include "ipsec_watch.h"

#define IPSEC_BUF_SIZE MNL_SOCKET_BUFFER_SIZE

int ipsec_parse_policy(const struct nlmsghdr *nlh, struct fp_ipsec_sel *sel)
{
	const struct xfrm_userpolicy_info *info;
	const struct xfrm_selector *s;
	const struct xfrm_mark *mark = NULL;
	const struct nlattr *a;
	bool transforms = false;
	uint32_t if_id = 0;
	size_t alen;

	if (nlh->nlmsg_type != XFRM_MSG_NEWPOLICY || mnl_nlmsg_get_payload_len(nlh) < sizeof(*info))
		return -EINVAL;
	info = mnl_nlmsg_get_payload(nlh);
	s = &info->sel;
	mnl_attr_for_each(a, nlh, sizeof(*info))
	{
		switch (mnl_attr_get_type(a)) {
		case XFRMA_TMPL:
			transforms |= mnl_attr_get_payload_len(a) >= sizeof(struct xfrm_user_tmpl);
			break;
		case XFRMA_MARK:
			if (mnl_attr_get_payload_len(a) >= sizeof(*mark))
				mark = mnl_attr_get_payload(a);
			break;
		case XFRMA_IF_ID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				if_id = mnl_attr_get_u32(a);
			break;
		}
	}
	/* In, out, forward: a socket's own policies (dir 3 to 5) are for its own packets. An
	 * xfrm interface's (if_id) take only what is routed through it: a route. */
	if (info->action != XFRM_POLICY_ALLOW || !transforms || info->dir > XFRM_POLICY_FWD ||
	    if_id)
		return 0;
	memset(sel, 0, sizeof(*sel));
	if (mark) {
		sel->mark = mark->v;
		sel->mark_mask = mark->m;
	}
	/* A family the kernel would not match on is taken for any address of any family. */
	if (s->family != AF_INET && s->family != AF_INET6)
		return 1;
	alen = s->family == AF_INET ? 4 : 16;
	sel->family = s->family;
	sel->prefixlen_s = s->prefixlen_s < 8 * alen ? s->prefixlen_s : 8 * alen;
	sel->prefixlen_d = s->prefixlen_d < 8 * alen ? s->prefixlen_d : 8 * alen;
	memcpy(sel->saddr, &s->saddr, alen);
	memcpy(sel->daddr, &s->daddr, alen);
	return 1;
}

static int add_sel(struct fp_ipsec *ip, const struct fp_ipsec_sel *sel)
{
	if (ip->nr == ip->cap) {
		size_t cap = ip->cap ? 2 * ip->cap : 16;
		struct fp_ipsec_sel *sels = realloc(ip->sels, cap * sizeof(*sels));

		if (!sels)
			return -ENOMEM;
		ip->sels = sels;
		ip->cap = cap;
	}
	ip->sels[ip->nr++] = *sel;
	return 0;
}

static int policy_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fp_ipsec_sel sel;

	if (ipsec_parse_policy(nlh, &sel) == 1 && add_sel(data, &sel))
		return MNL_CB_ERROR;
	return MNL_CB_OK;
}

/* The policies, read anew on a socket of their own (the events' also carries
 * notifications). On failure the ones read before stay. */
static int read_policies(struct fp_ipsec *ip)
{
	struct fp_ipsec fresh = {0};
	char req[NLMSG_SPACE(sizeof(struct xfrm_userpolicy_id))];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_XFRM, SOCK_CLOEXEC);
	int err;

	nlh->nlmsg_type = XFRM_MSG_GETPOLICY;
	nlh->nlmsg_seq = 1;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct xfrm_userpolicy_id));
	if (!nl && errno == EPROTONOSUPPORT)
		return 0; /* no CONFIG_XFRM_USER: nothing can add one */
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID))
		err = -errno;
	else
		err = fp_nl_dump(nl, nlh, ip->buf, IPSEC_BUF_SIZE, policy_cb, &fresh);
	if (nl)
		mnl_socket_close(nl);
	if (err) {
		free(fresh.sels);
		fp_log(LOG_WARNING, "cannot read the IPsec policies: %s", strerror(-err));
		return err;
	}
	free(ip->sels);
	ip->sels = fresh.sels;
	ip->nr = fresh.nr;
	ip->cap = fresh.cap;
	return 0;
}

int ipsec_read(struct fp_ipsec *ip)
{
	memset(ip, 0, sizeof(*ip));
	ip->buf = malloc(IPSEC_BUF_SIZE);
	return ip->buf ? read_policies(ip) : -ENOMEM;
}

int ipsec_open(struct fp_ipsec *ip)
{
	int group = XFRMNLGRP_POLICY;

	memset(ip, 0, sizeof(*ip));
	ip->buf = malloc(IPSEC_BUF_SIZE);
	if (!ip->buf)
		return -ENOMEM;
	ip->events = mnl_socket_open2(NETLINK_XFRM, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!ip->events) {
		if (errno == EPROTONOSUPPORT) /* no CONFIG_XFRM_USER: nothing can add one */
			return 0;
		fp_err("cannot watch the IPsec policies: %s", strerror(errno));
		ipsec_close(ip);
		return -errno;
	}
	if (mnl_socket_bind(ip->events, 0, MNL_SOCKET_AUTOPID) ||
	    mnl_socket_setsockopt(ip->events, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group))) {
		fp_err("cannot watch the IPsec policies: %s", strerror(errno));
		ipsec_close(ip);
		return -errno;
	}
	return read_policies(ip);
}

void ipsec_close(struct fp_ipsec *ip)
{
	if (ip->events)
		mnl_socket_close(ip->events);
	free(ip->buf);
	free(ip->sels);
	memset(ip, 0, sizeof(*ip));
}

int ipsec_fd(const struct fp_ipsec *ip)
{
	return ip->events ? mnl_socket_get_fd(ip->events) : -1;
}

bool ipsec_changed(struct fp_ipsec *ip)
{
	bool changed = false;

	if (!ip->events)
		return false;
	for (;;) {
		/* Which policy changed does not matter: they are read again. */
		ssize_t n = mnl_socket_recvfrom(ip->events, ip->buf, IPSEC_BUF_SIZE);

		if (n > 0 || (n < 0 && errno == ENOBUFS))
			changed = true;
		else
			break;
	}
	if (changed)
		read_policies(ip);
	return changed;
}

/* Whether the first @plen bits of @addr are @prefix's (both network order). */
static bool in_prefix(const uint32_t *prefix, uint8_t plen, const uint32_t *addr)
{
	int words = plen / 32, bits = plen % 32;

	if (memcmp(prefix, addr, words * 4))
		return false;
	return !bits || !((prefix[words] ^ addr[words]) & htonl(~0u << (32 - bits)));
}

bool ipsec_covers(const struct fp_ipsec *ip, uint8_t family, const uint32_t *addrs, int n,
		  uint32_t mark)
{
	int words = family == AF_INET ? 1 : 4;

	for (size_t i = 0; ip && i < ip->nr; i++) {
		const struct fp_ipsec_sel *sel = &ip->sels[i];
		bool src = false, dst = false;

		if ((sel->family && sel->family != family) ||
		    (mark & sel->mark_mask) != (sel->mark & sel->mark_mask))
			continue;
		for (int j = 0; j < n; j++) {
			src |= in_prefix(sel->saddr, sel->prefixlen_s, &addrs[j * words]);
			dst |= in_prefix(sel->daddr, sel->prefixlen_d, &addrs[j * words]);
		}
		if (src && dst)
			return true;
	}
	return false;
}
