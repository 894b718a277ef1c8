/* SPDX-License-Identifier: GPL-2.0-only */
/* What the sync offloads, and for how long conntrack keeps it (offload_policy.c). */
#ifndef FP_OFFLOAD_POLICY_H
#define FP_OFFLOAD_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "ctnetlink.h"

/* Conntrack's idle timeouts of what is offloaded, in seconds: established TCP, UDP stream. */
struct fp_ct_timeouts {
	uint32_t tcp, udp;
	int tcp_fd, udp_fd; /* their sysctls, kept open for each scan to read (-1: not yet) */
};

/*
 * Whether the entry may be offloaded. *unknown when the message cannot tell: an event
 * carries a TCP entry's state only when it changed.
 */
bool fp_offloadable(const struct fp_ct_entry *e, const struct fp_options *opt, bool *unknown);
/* Conntrack's own timeouts, from its sysctls (read at each scan: they may change). The
 * first read opens them, close closes them. */
void fp_ct_timeouts_init(struct fp_ct_timeouts *t);
void fp_ct_timeouts_read(struct fp_ct_timeouts *t);
void fp_ct_timeouts_close(struct fp_ct_timeouts *t);
/* The timeout of a connection of protocol proto. */
uint32_t fp_ct_timeout_s(const struct fp_ct_timeouts *t, uint8_t proto);

#endif
