// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IPsec watch (loader/ipsec_watch.c): which policies it keeps, from crafted
 * XFRM_MSG_NEWPOLICY messages, which connections they take, before and after NAT, and the
 * kernel's own policies read and followed in fp-test's namespace (`ip xfrm policy`). The
 * daemon's part, a transfer under a policy, is tests/e2e/test_ipsec.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/xfrm.h>

#include "ipsec_watch.h"
#include "testlib.h"
#include "tests.h"

struct policy_spec {
	int family;
	const char *src, *dst;
	uint8_t plen_s, plen_d;
	uint8_t dir, action;
	bool tmpl;
	uint32_t if_id;
	uint32_t mark, mark_mask;
};

static struct nlmsghdr *build_policy(char *buf, const struct policy_spec *p)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct xfrm_userpolicy_info *info = mnl_nlmsg_put_extra_header(nlh, sizeof(*info));

	nlh->nlmsg_type = XFRM_MSG_NEWPOLICY;
	info->sel.family = p->family;
	info->sel.prefixlen_s = p->plen_s;
	info->sel.prefixlen_d = p->plen_d;
	if (p->src)
		inet_pton(p->family, p->src, &info->sel.saddr);
	if (p->dst)
		inet_pton(p->family, p->dst, &info->sel.daddr);
	info->dir = p->dir;
	info->action = p->action;
	if (p->tmpl) {
		struct xfrm_user_tmpl tmpl = {.id.proto = IPPROTO_ESP, .mode = XFRM_MODE_TUNNEL};

		mnl_attr_put(nlh, XFRMA_TMPL, sizeof(tmpl), &tmpl);
	}
	if (p->if_id)
		mnl_attr_put_u32(nlh, XFRMA_IF_ID, p->if_id);
	if (p->mark_mask) {
		struct xfrm_mark mark = {.v = p->mark, .m = p->mark_mask};

		mnl_attr_put(nlh, XFRMA_MARK, sizeof(mark), &mark);
	}
	return nlh;
}

/* A watch holding the policies of @specs that are IPsec's. */
static void watch_of(struct fp_ipsec *ip, const struct policy_spec *specs, int n)
{
	memset(ip, 0, sizeof(*ip));
	ip->sels = calloc(n, sizeof(*ip->sels));
	for (int i = 0; i < n; i++) {
		char buf[MNL_SOCKET_BUFFER_SIZE];

		if (ipsec_parse_policy(build_policy(buf, &specs[i]), &ip->sels[ip->nr]) == 1)
			ip->nr++;
	}
}

/* A connection's four addresses: the original direction's source and destination, then the
 * reply's. */
static bool covers(const struct fp_ipsec *ip, int family, const char *const addr[4], uint32_t mark)
{
	uint32_t addrs[16];
	int words = family == AF_INET ? 1 : 4;

	for (int i = 0; i < 4; i++)
		inet_pton(family, addr[i], &addrs[i * words]);
	return ipsec_covers(ip, family, addrs, 4, mark);
}

#define OUT4(saddr, slen, daddr, dlen)                                                             \
	{                                                                                          \
		.family = AF_INET, .src = saddr, .dst = daddr, .plen_s = slen, .plen_d = dlen,     \
		.dir = XFRM_POLICY_OUT, .action = XFRM_POLICY_ALLOW, .tmpl = true                  \
	}

/* A LAN host to the far office, without NAT; to the internet, masqueraded. */
static const char *const to_office[4] = {"198.18.1.2", "198.19.8.2", "198.19.8.2", "198.18.1.2"};
static const char *const to_internet[4] = {"198.18.1.2", "198.19.2.2", "198.19.2.2", "198.19.2.1"};

static void test_parse(void)
{
	static const struct policy_spec bypass = {
		.family = AF_INET, .dir = XFRM_POLICY_OUT, .action = XFRM_POLICY_ALLOW};
	static const struct policy_spec block = {.family = AF_INET,
						 .dir = XFRM_POLICY_OUT,
						 .action = XFRM_POLICY_BLOCK,
						 .tmpl = true};
	static const struct policy_spec socket = {.family = AF_INET,
						  .dir = XFRM_POLICY_MAX,
						  .action = XFRM_POLICY_ALLOW,
						  .tmpl = true};
	static const struct policy_spec xfrmi = {.family = AF_INET,
						 .dir = XFRM_POLICY_OUT,
						 .action = XFRM_POLICY_ALLOW,
						 .tmpl = true,
						 .if_id = 7};
	static const struct policy_spec site = OUT4("198.18.1.0", 24, "198.19.8.0", 24);
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct fp_ipsec_sel sel;
	struct nlmsghdr *nlh;

	tl_case_begin("ipsec: a policy with templates is kept, with its selector");
	CHECK_EQ(ipsec_parse_policy(build_policy(buf, &site), &sel), 1, "a site-to-site policy");
	CHECK(sel.family == AF_INET && sel.prefixlen_s == 24 && sel.prefixlen_d == 24 &&
		      sel.saddr[0] == htonl(0xc6120100) && sel.daddr[0] == htonl(0xc6130800),
	      "selector not as given");
	tl_case_end();

	tl_case_begin("ipsec: bypass, block, socket and xfrm interface policies are not kept");
	CHECK_EQ(ipsec_parse_policy(build_policy(buf, &bypass), &sel), 0, "a bypass policy");
	CHECK_EQ(ipsec_parse_policy(build_policy(buf, &block), &sel), 0, "a block policy");
	CHECK_EQ(ipsec_parse_policy(build_policy(buf, &socket), &sel), 0, "a socket's policy");
	CHECK_EQ(ipsec_parse_policy(build_policy(buf, &xfrmi), &sel), 0,
		 "an xfrm interface's policy");
	tl_case_end();

	tl_case_begin("ipsec: a truncated policy or another message is refused");
	nlh = build_policy(buf, &site);
	nlh->nlmsg_len = NLMSG_HDRLEN + sizeof(struct xfrm_userpolicy_info) - 1;
	CHECK_EQ(ipsec_parse_policy(nlh, &sel), -EINVAL, "not a well-formed policy");
	nlh = build_policy(buf, &site);
	nlh->nlmsg_type = XFRM_MSG_DELPOLICY;
	CHECK_EQ(ipsec_parse_policy(nlh, &sel), -EINVAL, "not a well-formed policy");
	tl_case_end();
}

static void test_covers(void)
{
	static const struct policy_spec site[] = {OUT4("198.18.1.0", 24, "198.19.8.0", 24)};
	/* The far end's selector names the router's public address: after masquerade. */
	static const struct policy_spec natted[] = {OUT4("198.19.2.1", 32, "198.19.2.0", 28)};
	static const struct policy_spec marked[] = {{.family = AF_INET,
						     .dir = XFRM_POLICY_OUT,
						     .action = XFRM_POLICY_ALLOW,
						     .tmpl = true,
						     .mark = 0x10,
						     .mark_mask = 0xff}};
	static const struct policy_spec v6[] = {{.family = AF_INET6,
						 .src = "2001:2:0:30::",
						 .plen_s = 60,
						 .dst = "2001:2:0:2::",
						 .plen_d = 64,
						 .dir = XFRM_POLICY_FWD,
						 .action = XFRM_POLICY_ALLOW,
						 .tmpl = true}};
	static const char *const v6_in[4] = {"2001:2:0:3f::2", "2001:2:0:2::2", "2001:2:0:2::2",
					     "2001:2:0:3f::2"};
	static const char *const v6_out[4] = {"2001:2:0:40::2", "2001:2:0:2::2", "2001:2:0:2::2",
					      "2001:2:0:40::2"};
	struct fp_ipsec ip;

	tl_case_begin(
		"ipsec: a site-to-site policy takes the office's traffic, not the internet's");
	watch_of(&ip, site, 1);
	CHECK(covers(&ip, AF_INET, to_office, 0), "the office's connection not covered");
	CHECK(!covers(&ip, AF_INET, to_internet, 0), "an internet connection covered");
	free(ip.sels);
	tl_case_end();

	tl_case_begin("ipsec: a selector of addresses after NAT takes the connection");
	watch_of(&ip, natted, 1);
	CHECK(covers(&ip, AF_INET, to_internet, 0), "not covered by its translated address");
	CHECK(!covers(&ip, AF_INET, to_office, 0), "the office's connection covered");
	free(ip.sels);
	tl_case_end();

	tl_case_begin("ipsec: a policy with a mark takes only connections with it");
	watch_of(&ip, marked, 1);
	CHECK(!covers(&ip, AF_INET, to_internet, 0), "covered without the mark");
	CHECK(covers(&ip, AF_INET, to_internet, 0x110), "not covered with the mark");
	free(ip.sels);
	tl_case_end();

	tl_case_begin("ipsec: IPv6 prefixes to the bit, and no other family");
	watch_of(&ip, v6, 1);
	CHECK(covers(&ip, AF_INET6, v6_in, 0), "2001:2:0:3f::2 is in 2001:2:0:30::/60");
	CHECK(!covers(&ip, AF_INET6, v6_out, 0), "2001:2:0:40::2 is not");
	CHECK(!covers(&ip, AF_INET, to_office, 0), "an IPv6 policy covers IPv4");
	free(ip.sels);
	tl_case_end();
}

/* fp-test's namespace is its own: its policies are the test's. */
static bool xfrm(const char *args)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "ip xfrm policy %s 2>/dev/null", args);
	return system(cmd) == 0;
}

static void test_kernel(void)
{
	static const char *const tmpl = "tmpl src 198.19.2.1 dst 198.19.2.9 proto esp mode tunnel";
	static const char *const office[4] = {"198.18.1.2", "198.19.8.2", "198.19.8.2",
					      "198.18.1.2"};
	char args[256];
	struct fp_ipsec ip;

	tl_case_begin("ipsec: the kernel's policies, read and followed");
	if (ipsec_open(&ip)) {
		CHECK(false, "ipsec_open failed");
		tl_case_end();
		return;
	}
	if (ipsec_fd(&ip) < 0) {
		printf("  (no xfrm netlink in this kernel: skipped)\n");
		ipsec_close(&ip);
		tl_case_end();
		return;
	}
	CHECK_EQ(ip.nr, 0, "policies kept");
	CHECK(xfrm("add src 198.18.1.0/24 dst 198.19.9.0/24 dir out"), "ip xfrm policy add");
	CHECK(ipsec_changed(&ip), "a bypass policy added: no change seen");
	CHECK_EQ(ip.nr, 0, "policies kept");
	snprintf(args, sizeof(args), "add src 198.18.1.0/24 dst 198.19.8.0/24 dir out %s", tmpl);
	CHECK(xfrm(args), "ip xfrm policy add");
	CHECK(ipsec_changed(&ip), "a policy added: no change seen");
	CHECK_EQ(ip.nr, 1, "policies kept");
	CHECK(covers(&ip, AF_INET, office, 0), "the office's connection not covered");
	CHECK(!ipsec_changed(&ip), "a change seen without one");
	CHECK(xfrm("flush"), "ip xfrm policy flush");
	CHECK(ipsec_changed(&ip), "a flush: no change seen");
	CHECK_EQ(ip.nr, 0, "policies kept");
	ipsec_close(&ip);
	tl_case_end();
}

void test_ipsec(void)
{
	test_parse();
	test_covers();
	test_kernel();
}
