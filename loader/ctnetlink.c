// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conntrack messages in: the few attributes the sync uses, each checked for its size.
 *
 * libnetfilter_conntrack's parser calls exit() when an attribute has an unexpected size
 * ("ctnetlink kernel ABI is broken"): one malformed message would end the daemon. This
 * parser reads only what the offload decision needs and rejects the message instead.
 * Requests the daemon sends are still built with libnetfilter_conntrack.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "common.h"
#include "ctnetlink.h"

/* Attribute tables: the index of each attribute of a nest, NULL when absent. */
#define NEST_MAX 32

struct nest {
	const struct nlattr *attr[NEST_MAX];
	bool bad;
};

static int nest_cb(const struct nlattr *attr, void *data)
{
	struct nest *n = data;
	uint16_t type = mnl_attr_get_type(attr);

	if (mnl_attr_type_valid(attr, NEST_MAX - 1) > 0)
		n->attr[type] = attr;
	return MNL_CB_OK;
}

static int parse_nest(const struct nlattr *nest, struct nest *n)
{
	memset(n, 0, sizeof(*n));
	if (mnl_attr_validate(nest, MNL_TYPE_NESTED) < 0)
		return -EINVAL;
	return mnl_attr_parse_nested(nest, nest_cb, n) < 0 ? -EINVAL : 0;
}

/* The attribute of type, if present, with exactly len bytes of payload. */
static const void *fixed(const struct nest *n, int type, size_t len, bool *bad)
{
	const struct nlattr *a = n->attr[type];

	if (!a)
		return NULL;
	if (mnl_attr_get_payload_len(a) != len) {
		*bad = true;
		return NULL;
	}
	return mnl_attr_get_payload(a);
}

static int parse_tuple(const struct nlattr *nest, int family, struct fp_tuple *t)
{
	const void *src, *dst, *proto, *sport, *dport;
	struct nest tuple, ip, l4;
	size_t alen = family == AF_INET ? 4 : 16;
	bool bad = false;

	if (parse_nest(nest, &tuple) || !tuple.attr[CTA_TUPLE_IP] || !tuple.attr[CTA_TUPLE_PROTO] ||
	    parse_nest(tuple.attr[CTA_TUPLE_IP], &ip) ||
	    parse_nest(tuple.attr[CTA_TUPLE_PROTO], &l4))
		return -EINVAL;
	src = fixed(&ip, family == AF_INET ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, alen, &bad);
	dst = fixed(&ip, family == AF_INET ? CTA_IP_V4_DST : CTA_IP_V6_DST, alen, &bad);
	proto = fixed(&l4, CTA_PROTO_NUM, 1, &bad);
	sport = fixed(&l4, CTA_PROTO_SRC_PORT, 2, &bad);
	dport = fixed(&l4, CTA_PROTO_DST_PORT, 2, &bad);
	if (bad || !src || !dst || !proto)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->family = family;
	t->proto = *(const uint8_t *)proto;
	memcpy(t->src, src, alen);
	memcpy(t->dst, dst, alen);
	/* Ports: only TCP and UDP are offloaded, and theirs are required below. */
	if (sport)
		memcpy(&t->sport, sport, 2);
	if (dport)
		memcpy(&t->dport, dport, 2);
	if ((t->proto == IPPROTO_TCP || t->proto == IPPROTO_UDP) && (!sport || !dport))
		return -EINVAL;
	return 0;
}

static uint32_t get_be32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return ntohl(v);
}

int fp_ct_parse(const struct nlmsghdr *nlh, struct fp_ct_entry *e)
{
	const struct nfgenmsg *nfg;
	const void *status, *mark, *zone;
	struct nest top, nest;
	bool bad = false;

	memset(e, 0, sizeof(*e));
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*nfg))
		return -EINVAL;
	nfg = mnl_nlmsg_get_payload(nlh);
	if (nfg->nfgen_family != AF_INET && nfg->nfgen_family != AF_INET6)
		return -EINVAL;
	memset(&top, 0, sizeof(top));
	if (mnl_attr_parse(nlh, sizeof(*nfg), nest_cb, &top) < 0)
		return -EINVAL;

	for (int dir = 0; dir < 2; dir++) {
		const struct nlattr *a =
			top.attr[dir == FP_DIR_ORIG ? CTA_TUPLE_ORIG : CTA_TUPLE_REPLY];

		if (!a)
			continue;
		if (parse_tuple(a, nfg->nfgen_family, &e->tuple[dir]))
			return -EINVAL;
		e->has_tuple[dir] = true;
	}
	status = fixed(&top, CTA_STATUS, 4, &bad);
	mark = fixed(&top, CTA_MARK, 4, &bad);
	zone = fixed(&top, CTA_ZONE, 2, &bad);
	if (bad)
		return -EINVAL;
	if (status) {
		e->has_status = true;
		e->status = get_be32(status);
	}
	if (mark) {
		e->has_mark = true;
		e->mark = get_be32(mark);
	}
	if (zone) {
		uint16_t z;

		memcpy(&z, zone, 2);
		e->zone = ntohs(z);
	}
	if (top.attr[CTA_HELP]) {
		const struct nlattr *name;

		if (parse_nest(top.attr[CTA_HELP], &nest))
			return -EINVAL;
		name = nest.attr[CTA_HELP_NAME];
		/* Any helper at all keeps the entry in the kernel: it may rewrite payloads. */
		e->has_helper = name && mnl_attr_get_payload_len(name) > 0 &&
				*(const char *)mnl_attr_get_payload(name);
	}
	if (top.attr[CTA_PROTOINFO]) {
		const struct nlattr *tcp;
		struct nest tcp_nest;

		if (parse_nest(top.attr[CTA_PROTOINFO], &nest))
			return -EINVAL;
		tcp = nest.attr[CTA_PROTOINFO_TCP];
		if (tcp) {
			const void *state;

			if (parse_nest(tcp, &tcp_nest))
				return -EINVAL;
			state = fixed(&tcp_nest, CTA_PROTOINFO_TCP_STATE, 1, &bad);
			if (bad)
				return -EINVAL;
			if (state) {
				e->has_tcp_state = true;
				e->tcp_state = *(const uint8_t *)state;
			}
		}
	}
	return 0;
}

struct nlmsghdr *fp_ct_msg_start(char *buf, int msg_type, uint16_t flags, uint8_t family,
				 uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfh;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg_type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = family;
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	return nlh;
}

struct dump_ctx {
	void (*cb)(const struct fp_ct_entry *e, void *data);
	void *data;
};

static int dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *d = data;
	struct fp_ct_entry e;

	if (fp_ct_parse(nlh, &e) == 0)
		d->cb(&e, d->data);
	return MNL_CB_OK;
}

int fp_ct_dump(void (*cb)(const struct fp_ct_entry *e, void *data), void *data)
{
	char req[MNL_SOCKET_BUFFER_SIZE], *buf = malloc(MNL_SOCKET_BUFFER_SIZE * 16);
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	struct dump_ctx d = {.cb = cb, .data = data};
	struct nlmsghdr *nlh;
	int err;

	if (!buf || !nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
		err = buf ? -errno : -ENOMEM;
		goto out;
	}
	/* AF_UNSPEC: IPv4 and IPv6 */
	nlh = fp_ct_msg_start(req, IPCTNL_MSG_CT_GET, 0, AF_UNSPEC, time(NULL));
	err = fp_nl_dump(nl, nlh, buf, MNL_SOCKET_BUFFER_SIZE * 16, dump_cb, &d);
out:
	if (nl)
		mnl_socket_close(nl);
	free(buf);
	return err;
}
