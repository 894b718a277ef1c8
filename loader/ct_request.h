/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Requests to conntrack (ctnetlink), each naming an entry by its original tuple: one at a
 * time on a socket of their own, each answered before the next is sent (ct_request.c).
 */
#ifndef FP_CT_REQUEST_H
#define FP_CT_REQUEST_H

#include <stdint.h>

#include "conntable.h"
#include "ctnetlink.h"

struct mnl_socket;

struct fp_ct_requests {
	struct mnl_socket *nl;
	uint32_t seq;
	char *buf; /* the answers: an acknowledgement, or one entry and one */
};

int ct_requests_open(struct fp_ct_requests *r);
void ct_requests_close(struct fp_ct_requests *r);
/* Marks both directions of a TCP entry "be liberal" (window tracking off). 0 or -errno. */
int ct_set_liberal(struct fp_ct_requests *r, const struct fp_tuple *orig);
/* Sets the entry's timeout to secs from now. 0, -ENOENT if there is none, or -errno. */
int ct_set_timeout(struct fp_ct_requests *r, const struct fp_tuple *orig, uint32_t secs);
/* Reads the entry into *e. 0, -ENOENT if there is none, or -errno. */
int ct_get(struct fp_ct_requests *r, const struct fp_tuple *orig, struct fp_ct_entry *e);

#endif
