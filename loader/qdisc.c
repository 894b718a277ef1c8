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
	const uint32_t *ifindexes;
	int n;
	char (*kinds)[FP_QDISC_KIND_LEN];
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
	int i;

	if (nlh->nlmsg_type != RTM_NEWQDISC || mnl_nlmsg_get_payload_len(nlh) < sizeof(*tcm))
		return MNL_CB_OK;
	for (i = 0; i < qs->n && qs->ifindexes[i] != (uint32_t)tcm->tcm_ifindex; i++)
		;
	if (i == qs->n || qs->kinds[i][0])
		return MNL_CB_OK; /* not asked for, or a shaper already found */
	mnl_attr_parse(nlh, sizeof(*tcm), kind_cb, &kind);
	for (size_t k = 0; kind && k < sizeof(shaping_kinds) / sizeof(shaping_kinds[0]); k++)
		if (!strcmp(kind, shaping_kinds[k]))
			snprintf(qs->kinds[i], FP_QDISC_KIND_LEN, "%s", kind);
	return MNL_CB_OK;
}

int fp_shaping_qdiscs(const uint32_t *ifindexes, int n, char (*kinds)[FP_QDISC_KIND_LEN])
{
	char req[NLMSG_SPACE(sizeof(struct tcmsg))];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct qdisc_scan qs = {.ifindexes = ifindexes, .n = n, .kinds = kinds};
	struct tcmsg *tcm;

	for (int i = 0; i < n; i++)
		kinds[i][0] = '\0';
	if (!n)
		return 0;
	/* One dump of every qdisc, whatever the number of interfaces asked about. */
	nlh->nlmsg_type = RTM_GETQDISC;
	nlh->nlmsg_seq = time(NULL);
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	return fp_rtnl_request(nlh, true, qdisc_cb, &qs);
}

int fp_shaping_qdisc(int ifindex, char *kind, size_t len)
{
	uint32_t one = ifindex;
	char kinds[1][FP_QDISC_KIND_LEN];
	int err = fp_shaping_qdiscs(&one, 1, kinds);

	if (err)
		return err;
	snprintf(kind, len, "%s", kinds[0]);
	return kinds[0][0] != '\0';
}
