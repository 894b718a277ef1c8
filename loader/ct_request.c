// SPDX-License-Identifier: GPL-2.0-only
/*
 * Requests to conntrack: be-liberal marks, timeout refreshes and reads of one entry. The
 * sync sends them while it parses a dump or a batch of events, so they have a socket and a
 * buffer of their own: on the dump's socket their answer would queue behind the dump, and
 * in the dump's buffer it would overwrite the messages being parsed. Messages are built
 * with libnetfilter_conntrack; answers are parsed by ctnetlink.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

#include "common.h"
#include "ct_request.h"

#define ANSWER_BUF_SIZE MNL_SOCKET_BUFFER_SIZE /* an acknowledgement, or one entry and one */

int ct_requests_open(struct fp_ct_requests *r)
{
	memset(r, 0, sizeof(*r));
	r->buf = malloc(ANSWER_BUF_SIZE);
	r->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!r->buf || !r->nl || mnl_socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID)) {
		int err = r->buf ? -errno : -ENOMEM;

		ct_requests_close(r);
		return err;
	}
	return 0;
}

void ct_requests_close(struct fp_ct_requests *r)
{
	if (r->nl)
		mnl_socket_close(r->nl);
	free(r->buf);
	r->nl = NULL;
	r->buf = NULL;
}

/* A conntrack message naming the entry by its original tuple; NULL if out of memory. */
static struct nf_conntrack *ct_for_tuple(const struct fp_tuple *t)
{
	struct nf_conntrack *ct = nfct_new();

	if (!ct)
		return NULL;
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, t->family);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, t->proto);
	if (t->family == AF_INET) {
		nfct_set_attr_u32(ct, ATTR_ORIG_IPV4_SRC, t->src[0]);
		nfct_set_attr_u32(ct, ATTR_ORIG_IPV4_DST, t->dst[0]);
	} else {
		nfct_set_attr(ct, ATTR_ORIG_IPV6_SRC, t->src);
		nfct_set_attr(ct, ATTR_ORIG_IPV6_DST, t->dst);
	}
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, t->sport);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, t->dport);
	return ct;
}

/* Sends ct as msg_type, feeds the answers to cb until the acknowledgement, frees ct. */
static int request(struct fp_ct_requests *r, struct nf_conntrack *ct, uint8_t family, int msg_type,
		   fp_nl_cb cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	/* IPCTNL_MSG_CT_NEW without NLM_F_CREATE: a change only */
	struct nlmsghdr *nlh =
		fp_ct_msg_start(buf, msg_type, NLM_F_REQUEST | NLM_F_ACK, family, ++r->seq);
	int err = nfct_nlmsg_build(nlh, ct) < 0 ? -EINVAL : 0;

	nfct_destroy(ct);
	return err ?: fp_nl_request(r->nl, nlh, r->buf, ANSWER_BUF_SIZE, cb, data);
}

int ct_set_liberal(struct fp_ct_requests *r, const struct fp_tuple *orig)
{
	struct nf_conntrack *ct = ct_for_tuple(orig);

	if (!ct)
		return -ENOMEM;
	nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG, IP_CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(ct, ATTR_TCP_MASK_ORIG, IP_CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL, IP_CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(ct, ATTR_TCP_MASK_REPL, IP_CT_TCP_FLAG_BE_LIBERAL);
	return request(r, ct, orig->family, IPCTNL_MSG_CT_NEW, NULL, NULL);
}

int ct_set_timeout(struct fp_ct_requests *r, const struct fp_tuple *orig, uint32_t secs)
{
	struct nf_conntrack *ct = ct_for_tuple(orig);

	if (!ct)
		return -ENOMEM;
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, secs);
	return request(r, ct, orig->family, IPCTNL_MSG_CT_NEW, NULL, NULL);
}

struct get_answer {
	struct fp_ct_entry *e;
	bool found;
};

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct get_answer *a = data;

	if (fp_ct_parse(nlh, a->e) == 0 && a->e->has_tuple[FP_DIR_ORIG])
		a->found = true;
	return MNL_CB_OK;
}

int ct_get(struct fp_ct_requests *r, const struct fp_tuple *orig, struct fp_ct_entry *e)
{
	struct nf_conntrack *ct = ct_for_tuple(orig);
	struct get_answer a = {.e = e};
	int err;

	if (!ct)
		return -ENOMEM;
	err = request(r, ct, orig->family, IPCTNL_MSG_CT_GET, get_cb, &a);
	if (!err && !a.found)
		err = -ENOENT; /* acknowledged, but no entry it could read: as good as gone */
	return err;
}
