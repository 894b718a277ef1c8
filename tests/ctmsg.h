/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One conntrack entry as a ctnetlink message, for the tools that make them up: the fuzz
 * targets' seeds (tests/fuzz/make_seeds.c) and the benchmark's burst of new connections
 * (tests/bench/fp_bench.c). Built with libnetfilter_conntrack, as the daemon's requests are.
 */
#ifndef FP_TESTS_CTMSG_H
#define FP_TESTS_CTMSG_H

#include <stdint.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

/* A connection src:sport -> dst:dport, answered by dst:dport -> reply_dst:reply_dport. */
struct ct_msg {
	int family, proto;
	const void *src, *dst, *reply_dst;  /* network order: 4 or 16 bytes by family */
	uint16_t sport, dport, reply_dport; /* host order */
	uint32_t status;		    /* IPS_* */
	uint32_t timeout;		    /* seconds */
	uint32_t mark;
	int tcp_state; /* TCP_CONNTRACK_*, or -1 for none */
};

static inline void ct_msg_addr(struct nf_conntrack *ct, int family, enum nf_conntrack_attr v4,
			       enum nf_conntrack_attr v6, const void *addr)
{
	if (family == AF_INET)
		nfct_set_attr(ct, v4, addr);
	else
		nfct_set_attr(ct, v6, addr);
}

/*
 * Writes the message (msg_type, flags and seq in its header) at buf, which has room for
 * it: returns its length, or 0 when libnetfilter_conntrack cannot build it.
 */
static inline size_t ct_msg_put(void *buf, int msg_type, uint16_t flags, uint32_t seq,
				const struct ct_msg *m)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nf_conntrack *ct = nfct_new();
	struct nfgenmsg *nfg;
	size_t len = 0;

	if (!ct)
		return 0;
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg_type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = m->family;
	nfg->version = NFNETLINK_V0;
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, m->family);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, m->proto);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, m->family);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, m->proto);
	ct_msg_addr(ct, m->family, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, m->src);
	ct_msg_addr(ct, m->family, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST, m->dst);
	ct_msg_addr(ct, m->family, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, m->dst);
	ct_msg_addr(ct, m->family, ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_DST, m->reply_dst);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(m->sport));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(m->dport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(m->dport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(m->reply_dport));
	nfct_set_attr_u32(ct, ATTR_STATUS, m->status);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, m->timeout);
	nfct_set_attr_u32(ct, ATTR_MARK, m->mark);
	if (m->proto == IPPROTO_TCP && m->tcp_state >= 0)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, m->tcp_state);
	if (nfct_nlmsg_build(nlh, ct) >= 0)
		len = nlh->nlmsg_len;
	nfct_destroy(ct);
	return len;
}

#endif
