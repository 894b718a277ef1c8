/* SPDX-License-Identifier: GPL-2.0-only */
/* Conntrack messages (ctnetlink) in: what the sync needs of one entry (ctnetlink.c). */
#ifndef FP_CTNETLINK_H
#define FP_CTNETLINK_H

#include <stdbool.h>
#include <stdint.h>

#include "conntable.h"

struct nlmsghdr;

/* One conntrack entry as a message describes it; has_* says what the message carried. */
struct fp_ct_entry {
	struct fp_tuple tuple[2]; /* FP_DIR_ORIG, FP_DIR_REPLY */
	bool has_tuple[2];
	bool has_status, has_tcp_state, has_mark;
	bool has_helper;   /* a helper with a name is assigned */
	uint8_t tcp_state; /* TCP_CONNTRACK_* */
	uint16_t zone;	   /* host order; 0: the default zone */
	uint32_t status;   /* IPS_*, host order */
	uint32_t mark;	   /* host order */
};

/*
 * Parses a ctnetlink entry message (IPCTNL_MSG_CT_NEW/DELETE, a dump or GET reply). Returns
 * 0, or -EINVAL for a message that is not a well-formed entry: any attribute of the wrong
 * size, a truncated header, an unknown family. Never trusts a length it did not check.
 */
int fp_ct_parse(const struct nlmsghdr *nlh, struct fp_ct_entry *e);

/* Starts a ctnetlink request of msg_type (IPCTNL_MSG_CT_*) for family in buf. */
struct nlmsghdr *fp_ct_msg_start(char *buf, int msg_type, uint16_t flags, uint8_t family,
				 uint32_t seq);

/*
 * Dumps every conntrack entry, IPv4 and IPv6, on a socket of its own: each well-formed one
 * to cb. 0 or -errno.
 */
int fp_ct_dump(void (*cb)(const struct fp_ct_entry *e, void *data), void *data);

#endif
