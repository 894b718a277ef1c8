// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shaping detection. An XDP redirect hands the frame to the egress driver directly: the
 * egress interface's qdisc never sees it, and XDP runs before tc ingress, where SQM-style
 * ingress shaping redirects to an ifb. So an interface with a shaper (htb, tbf, hfsc, cake,
 * cbq anywhere in its tree) or an ingress qdisc is not offloaded unless the operator says
 * so (--allow-shaping): the shaper is usually why it is there (bufferbloat, fair shares).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "common.h"
#include "qdisc.h"

static const char *const shaping_kinds[] = {"htb", "tbf", "hfsc", "cake", "cbq", "ingress"};

struct qdisc_scan {
	int ifindex;
	char *kind;
	size_t len;
	int found;
};

static int kind_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == TCA_KIND &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
		*(const char **)data = mnl_attr_get_str(attr);
	return MNL_CB_OK;
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qdisc_scan *qs = data;
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	const char *kind = NULL;

	if (nlh->nlmsg_type != RTM_NEWQDISC || mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm) ||
	    tcm->tcm_ifindex != qs->ifindex || qs->found)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, sizeof(*tcm), kind_cb, &kind);
	for (size_t i = 0; kind && i < sizeof(shaping_kinds) / sizeof(shaping_kinds[0]); i++) {
		if (!strcmp(kind, shaping_kinds[i])) {
			snprintf(qs->kind, qs->len, "%s", kind);
			qs->found = 1;
		}
	}
	return MNL_CB_OK;
}

int fp_shaping_qdisc(int ifindex, char *kind, size_t len)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct qdisc_scan qs = {.ifindex = ifindex, .kind = kind, .len = len};
	struct tcmsg *tcm;
	uint32_t seq = time(NULL), portid;
	int ret = 0;
	ssize_t n;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID)) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	while ((n = mnl_socket_recvfrom(nl, buf, sizeof(buf))) > 0) {
		if (!fp_nlmsg_stream_ok(buf, n)) {
			ret = -EBADMSG;
			goto out;
		}
		ret = mnl_cb_run(buf, n, seq, portid, qdisc_cb, &qs);
		if (ret <= MNL_CB_STOP)
			break;
	}
	ret = ret < 0 ? fp_nl_error() : qs.found;
out:
	if (nl)
		mnl_socket_close(nl);
	return ret;
}
