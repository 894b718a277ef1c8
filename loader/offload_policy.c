// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the sync offloads: TCP once ESTABLISHED and ASSURED, UDP once a reply was seen;
 * never entries with a helper, sequence adjustment, a zone, or a mark the user excluded
 * (--skip-mark), nor those dying, unconfirmed, templates or untracked. And how long an
 * offloaded connection may sit idle: conntrack's own timeouts, which the daemon refreshes
 * while the fastpath carries it.
 */
#include <netinet/in.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

#include "offload_policy.h"

bool fp_offloadable(const struct fp_ct_entry *e, const struct fp_options *opt, bool *unknown)
{
	*unknown = false;
	if (!e->has_status)
		return false;
	if (e->status & (IPS_DYING | IPS_SEQ_ADJUST | IPS_HELPER | IPS_TEMPLATE | IPS_UNTRACKED))
		return false;
	if (!(e->status & IPS_CONFIRMED))
		return false;
	if (e->has_helper || e->zone)
		return false;
	if (opt->skip_mask && e->has_mark && (e->mark & opt->skip_mask) == opt->skip_mark)
		return false;
	if (e->tuple[FP_DIR_ORIG].proto == IPPROTO_UDP)
		return e->status & IPS_SEEN_REPLY;
	if (e->tuple[FP_DIR_ORIG].proto != IPPROTO_TCP)
		return false;
	if (!e->has_tcp_state) {
		*unknown = true;
		return false;
	}
	return e->tcp_state == TCP_CONNTRACK_ESTABLISHED && (e->status & IPS_ASSURED);
}

void fp_ct_timeouts_read(struct fp_ct_timeouts *t)
{
	t->tcp = fp_read_u32_file("/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established",
				  432000);
	t->udp = fp_read_u32_file("/proc/sys/net/netfilter/nf_conntrack_udp_timeout_stream", 120);
}

uint32_t fp_ct_timeout_s(const struct fp_ct_timeouts *t, uint8_t proto)
{
	return proto == IPPROTO_TCP ? t->tcp : t->udp;
}
