/* SPDX-License-Identifier: GPL-2.0-only */
/* Shaping qdiscs: an XDP redirect bypasses them (qdisc.c). */
#ifndef FP_QDISC_H
#define FP_QDISC_H

#include <stddef.h>
#include <stdint.h>

/*
 * Whether ifindex has a qdisc that shapes or polices its traffic, which the fastpath would
 * bypass: returns 1 and its kind in kind (e.g. "htb"), 0 if none, or -errno.
 */
int fp_shaping_qdisc(int ifindex, char *kind, size_t len);

#define FP_QDISC_KIND_LEN 16
/* The same for n interfaces in one netlink dump: kinds[i] is "" where there is none.
 * Returns 0 or -errno. */
int fp_shaping_qdiscs(const uint32_t *ifindexes, int n, char (*kinds)[FP_QDISC_KIND_LEN]);

#endif
