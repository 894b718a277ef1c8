// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the sync offloads: TCP once ESTABLISHED and ASSURED, UDP once a reply was seen;
 * never entries with a helper, sequence adjustment, a zone, or a mark the user excluded
 * (--skip-mark), nor those dying, unconfirmed, templates or untracked. And how long an
 * offloaded connection may sit idle: conntrack's own timeouts, which the daemon refreshes
 * while the fastpath carries it.
 */
#include <fcntl.h>
#include <unistd.h>
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

/* The sysctls, and the kernel's defaults for when they cannot be read. */
#define TCP_TIMEOUT_SYSCTL  "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established"
#define TCP_TIMEOUT_DEFAULT 432000
#define UDP_TIMEOUT_SYSCTL  "/proc/sys/net/netfilter/nf_conntrack_udp_timeout_stream"
#define UDP_TIMEOUT_DEFAULT 120

void fp_ct_timeouts_init(struct fp_ct_timeouts *t)
{
	*t = (struct fp_ct_timeouts){
		.tcp = TCP_TIMEOUT_DEFAULT, .udp = UDP_TIMEOUT_DEFAULT, .tcp_fd = -1, .udp_fd = -1};
}

/* A sysctl kept open and read again from its start: opening two at each scan was a fifth of
 * what a scan at rest cost. */
static uint32_t read_sysctl(int *fd, const char *path, uint32_t fallback)
{
	if (*fd < 0)
		*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? fallback : fp_pread_u32(*fd, fallback);
}

void fp_ct_timeouts_read(struct fp_ct_timeouts *t)
{
	t->tcp = read_sysctl(&t->tcp_fd, TCP_TIMEOUT_SYSCTL, TCP_TIMEOUT_DEFAULT);
	t->udp = read_sysctl(&t->udp_fd, UDP_TIMEOUT_SYSCTL, UDP_TIMEOUT_DEFAULT);
}

void fp_ct_timeouts_close(struct fp_ct_timeouts *t)
{
	if (t->tcp_fd >= 0)
		close(t->tcp_fd);
	if (t->udp_fd >= 0)
		close(t->udp_fd);
	t->tcp_fd = t->udp_fd = -1;
}

uint32_t fp_ct_timeout_s(const struct fp_ct_timeouts *t, uint8_t proto)
{
	return proto == IPPROTO_TCP ? t->tcp : t->udp;
}
